/*
 * layers_show_cmd.c - `cagerun --show`'s account of the command layer:
 * how COMMAND was resolved from PATH (each symlink, #! line, wrapper and
 * package found on the way) and the grants that follow, so that a reader
 * sees why each path of an install tree is open.
 */
#include "layers.h"

void layers_show_command(const struct layers *L, FILE *out)
{
	const struct cmd_res *r = &L->cmd;
	if (!r->found)
		return;
	fprintf(out, "command: %s, resolved before the start (read and exec on what it needs):\n",
		r->found);
	for (size_t i = 0; i < r->nsteps; i++)
		fprintf(out, "  %s\n", r->steps[i]);
	if (r->exec)
		fprintf(out, "  runs %s in place of the shim, PATH starting with %s\n", r->exec,
			r->path_prefix ? r->path_prefix : "");
	for (size_t i = 0; i < r->n; i++)
		fprintf(out, "  grant %s%s   (%s)\n", r->g[i].path, r->g[i].tree ? "/**" : "",
			r->g[i].why);
}
