/*
 * cage_lint_main.c - cage-lint, the program cagerun asks for lint's
 * verdict on the layers it composed (layers_lint.h says why it is not
 * done in cagerun). It runs with cagerun's privileges, outside any
 * sandbox, reads policy files as cagerun's own compile did, and answers
 * nothing but diagnostics.
 */
#include <stdio.h>

#include "ll_serve.h"

int main(int argc, char **argv)
{
	return ll_serve(argc, argv, stdin, stdout, stderr);
}
