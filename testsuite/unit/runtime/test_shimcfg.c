/*
 * test_shimcfg.c - the version managers' file readers (runtime/layers/
 * shimcfg.c): .tool-versions, the [tools] subset of mise.toml, and the
 * JSON of volta's records and package.json's "volta" key, each with the
 * malformed input it must refuse with FILE:LINE.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shimcfg.h"

static struct shc_tools T;
static char err[1024];

static bool tv(const char *text)
{
	err[0] = '\0';
	return shc_tool_versions("t", text, strlen(text), &T, err, sizeof err);
}

static bool toml(const char *text)
{
	err[0] = '\0';
	return shc_mise_toml("m.toml", text, strlen(text), &T, err, sizeof err);
}

static bool js(const char *text, const char *k1, const char *k2, char *out, size_t n, bool *f)
{
	const char *path[2] = { k1, k2 };
	err[0] = '\0';
	return shc_json_str("p.json", text, strlen(text), path, k2 ? 2 : 1, out, n, f, err,
			    sizeof err);
}

Test(shimcfg, tool_versions)
{
	cr_assert(tv("# pins\nnodejs 20.11.0 18.19.0 # two\n\n  python\t3.12.1\r\n"), "%s", err);
	cr_assert_eq(T.n, 2);
	const struct shc_tool *n = shc_find(&T, "nodejs");
	cr_assert(n);
	cr_assert_eq(n->nvers, 2);
	cr_assert_str_eq(n->vers[0], "20.11.0");
	cr_assert_str_eq(n->vers[1], "18.19.0");
	cr_assert_eq(n->line, 2);
	cr_assert_str_eq(shc_find(&T, "python")->vers[0], "3.12.1");
	cr_assert_null(shc_find(&T, "ruby"));
	cr_assert(tv(""), "%s", err);
	cr_assert_eq(T.n, 0);
}

Test(shimcfg, tool_versions_malformed)
{
	cr_assert_not(tv("python 3\nnodejs\n"));
	cr_assert_str_eq(err, "t:2: nodejs has no version");
	cr_assert_not(tv("nodejs 20\nnodejs 18\n"));
	cr_assert_str_eq(err, "t:2: nodejs is named twice (first on line 1)");
	cr_assert_not(tv("nodejs ../../etc\n"));
	cr_assert(strstr(err, "t:1: nodejs: the version \"../../etc\" cannot name a directory"), "%s",
		  err);
	cr_assert_not(tv("nodejs ..\n"));
	cr_assert_not(tv("a 1 2 3 4 5 6 7 8 9\n"));
	cr_assert(strstr(err, "more than 8 versions"), "%s", err);
	char nul[] = "nodejs 20\0x";
	cr_assert_not(shc_tool_versions("t", nul, sizeof nul - 1, &T, err, sizeof err));
	cr_assert(strstr(err, "NUL"), "%s", err);
	/* a line past the bound */
	size_t n = SHC_MAX_LINE + 16;
	char *big = malloc(n + 1);
	memset(big, 'a', n);
	big[n] = '\0';
	cr_assert_not(tv(big));
	cr_assert(strstr(err, "t:1: a line longer than 4096 bytes"), "%s", err);
	free(big);
	/* more tools than the bound */
	char many[SHC_MAX_TOOLS * 16 + 64] = "";
	for (int i = 0; i <= SHC_MAX_TOOLS; i++)
		snprintf(many + strlen(many), sizeof many - strlen(many), "t%d 1\n", i);
	cr_assert_not(tv(many));
	cr_assert(strstr(err, "more than 64 tools"), "%s", err);
}

Test(shimcfg, mise_toml)
{
	cr_assert(toml("min_version = '2024.1'\n"
		       "[env]\n"
		       "SCRIPT = \"\"\"\n"
		       "[tools]\n"
		       "node = \"1\"\n"
		       "\"\"\"\n"
		       "[tasks.build]\n"
		       "run = 'make'\n"
		       "[tools]  # the pins\n"
		       "node = { version = \"20\", os = 'linux' }\n"
		       "\"npm:@anthropic-ai/claude-code\" = [\"1.0.0\", \"0.9\"]\n"
		       "python = '3.12'\n"
		       "[tools.go]\n"
		       "version = \"1.22\"\n"
		       "postinstall = \"echo\"\n"
		       "[settings]\n"
		       "x = 1\n"),
		  "%s", err);
	cr_assert_eq(T.n, 4);
	const struct shc_tool *n = shc_find(&T, "node");
	cr_assert(n);
	cr_assert_eq(n->nvers, 1);
	cr_assert_str_eq(n->vers[0], "20");
	cr_assert_eq(n->line, 10);
	const struct shc_tool *c = shc_find(&T, "npm:@anthropic-ai/claude-code");
	cr_assert(c);
	cr_assert_eq(c->nvers, 2);
	cr_assert_str_eq(c->vers[1], "0.9");
	cr_assert_str_eq(shc_find(&T, "python")->vers[0], "3.12");
	cr_assert_str_eq(shc_find(&T, "go")->vers[0], "1.22");
}

Test(shimcfg, mise_toml_malformed)
{
	cr_assert_not(toml("[tools]\nnode = 20\n"));
	cr_assert_str_eq(err, "m.toml:2: node: a version must be a string");
	cr_assert_not(toml("[tools]\nnode = [\"20\",\n  \"18\"]\n"));
	cr_assert(strstr(err, "m.toml:2:"), "%s", err);
	cr_assert_not(toml("[tools]\nnode \"20\"\n"));
	cr_assert_str_eq(err, "m.toml:2: expected = after node");
	cr_assert_not(toml("[tools]\nnode = \"\"\"20\"\"\"\n"));
	cr_assert_not(toml("[tools]\nnode = { os = \"linux\" }\n"));
	cr_assert_str_eq(err, "m.toml:2: node has no version");
	cr_assert_not(toml("[tools.node]\nos = \"linux\"\n"));
	cr_assert_str_eq(err, "m.toml:1: [tools.node] has no version");
	cr_assert_not(toml("[tools]\nnode = \"20\" extra\n"));
	cr_assert_not(toml("[tools]\nnode = \"a/b\"\n"));
	cr_assert_not(toml("[tools]\nnode = \"20\"\n[tools]\nnode = \"18\"\n"));
	cr_assert(strstr(err, "named twice"), "%s", err);
	cr_assert_not(toml("[tools]\n\"no\\\"de\" = \"20\"\n"));
	cr_assert_not(toml("[tools]\nnode = { version = \"20\",\240os = \"linux\" }\n"));
	cr_assert(strstr(err, "m.toml:2: node: a key expected in its table"), "%s", err);
}

Test(shimcfg, json)
{
	const char *pj = "{\n  \"name\": \"ws\",\n  \"n\": [1, -2.5e3, true, null, {\"a\": []}],\n"
			 "  \"dependencies\": {\"@scope/pkg\": \"^1.0\"},\n"
			 "  \"volta\": {\"node\": \"20.11.0\", \"npm\": null, \"extends\": \"..\\/base.json\"}\n}\n";
	char out[256];
	bool f;
	cr_assert(js(pj, "volta", "node", out, sizeof out, &f), "%s", err);
	cr_assert(f);
	cr_assert_str_eq(out, "20.11.0");
	cr_assert(js(pj, "volta", "npm", out, sizeof out, &f), "%s", err);
	cr_assert_not(f);
	cr_assert(js(pj, "volta", "extends", out, sizeof out, &f), "%s", err);
	cr_assert_str_eq(out, "../base.json");
	cr_assert(js(pj, "volta", "yarn", out, sizeof out, &f), "%s", err);
	cr_assert_not(f);
	cr_assert(js(pj, "dependencies", "@scope/pkg", out, sizeof out, &f), "%s", err);
	cr_assert(f);
	cr_assert(js(pj, "name", NULL, out, sizeof out, &f), "%s", err);
	cr_assert_str_eq(out, "ws");
	cr_assert(js("{\"node\":{\"runtime\":\"18.19.0\",\"npm\":null},\"pnpm\":null}", "node",
		     "runtime", out, sizeof out, &f), "%s", err);
	cr_assert_str_eq(out, "18.19.0");
	cr_assert(js("{\"a\":\"\\u0041\\n\"}", "a", NULL, out, sizeof out, &f), "%s", err);
	cr_assert_str_eq(out, "A\n");
}

Test(shimcfg, json_malformed)
{
	char out[64];
	bool f;
	cr_assert_not(js("{\"volta\": {\"node\": 20}}", "volta", "node", out, sizeof out, &f));
	cr_assert_str_eq(err, "p.json:1: a number where a string was expected");
	cr_assert_not(js("{\n\"volta\": {\"node\": {}}}", "volta", "node", out, sizeof out, &f));
	cr_assert_str_eq(err, "p.json:2: an object where a string was expected");
	cr_assert_not(js("{\"a\": \"x\",}", "a", NULL, out, sizeof out, &f));
	cr_assert_not(js("{\"a\": \"x\"} trailing", "a", NULL, out, sizeof out, &f));
	cr_assert(strstr(err, "text after the JSON value"), "%s", err);
	cr_assert_not(js("{\"a\": \"x", "a", NULL, out, sizeof out, &f));
	cr_assert_not(js("{\"a\": \"\\q\"}", "a", NULL, out, sizeof out, &f));
	cr_assert_not(js("{\"a\": \"tab\there\"}", "a", NULL, out, sizeof out, &f));
	cr_assert_not(js("{a: \"x\"}", "a", NULL, out, sizeof out, &f));
	cr_assert_not(js("", "a", NULL, out, sizeof out, &f));
	cr_assert_not(js("{\"a\": \"0123456789012345678901234567890123456789012345678901234567890123456789\"}",
			 "a", NULL, out, sizeof out, &f));
	cr_assert(strstr(err, "too long"), "%s", err);
	cr_assert_not(js("{\"a\": \"1\",\n \"a\": \"2\"}", "a", NULL, out, sizeof out, &f));
	cr_assert_str_eq(err, "p.json:2: the key is named twice");
	cr_assert_not(js("{\"a\": \"\\u00zz\"}", "a", NULL, out, sizeof out, &f));
	cr_assert_not(js("{\"a\": \"\\\0\"}", "a", NULL, out, sizeof out, &f));
	/* nesting past the bound */
	char deep[200] = "";
	for (int i = 0; i < 40; i++)
		strcat(deep, "[");
	cr_assert_not(js(deep, "a", NULL, out, sizeof out, &f));
	cr_assert(strstr(err, "nested deeper than 32"), "%s", err);
}
