/*
 * test_sbpl_emit.c - the SBPL backend: string escaping, glob regexes
 * (checked against POSIX regexec and the IR matcher, not just by eye), the
 * /private link mapping, the string length limit, the four modes, rule
 * order (protect last, allow and deny on the same operations) and
 * deterministic output.
 */
#include <criterion/criterion.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "cage.h"
#include "path.h"
#include "sbpl.h"

/* ---- helpers ---- */

static char *emit_text(const char *src, const char **err_out)
{
	cage_options *o = cage_options_new();
	cr_assert(o);
	cage_options_target(o, "macos"); /* a Seatbelt profile is macOS only */
	cage_options_home(o, "/Users/alice");
	cage_policy *p = cage_load_string("t.cage", src, strlen(src), o);
	cr_assert(p);
	if (cage_error_count(p) > 0) {
		cage_print_diagnostics(p, stderr, false);
		cr_assert_fail("test policy has errors");
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert(f);
	const char *err = NULL;
	bool ok = cage_emit(p, "sbpl", f, &err);
	fclose(f);
	if (err_out)
		*err_out = ok ? NULL : strdup(err);
	cage_policy_free(p);
	cage_options_free(o);
	if (!ok) {
		free(buf);
		return NULL;
	}
	return buf;
}

static char *emit_ok(const char *src)
{
	const char *err = NULL;
	char *t = emit_text(src, &err);
	cr_assert(t, "emit failed: %s", err ? err : "?");
	return t;
}

/* Byte offset of the first occurrence of `needle` (which must occur). */
static size_t at(const char *hay, const char *needle)
{
	const char *p = strstr(hay, needle);
	cr_assert(p, "expected to find: %s", needle);
	return (size_t)(p - hay);
}

static char *str_of(struct sbpl_buf *b)
{
	cr_assert(!b->oom);
	char *s = strdup(b->p ? b->p : "");
	sbpl_buf_free(b);
	return s;
}

/* ---- strings ---- */

Test(sbpl_string, escapes_quote_and_backslash)
{
	struct sbpl_buf b = { 0 };
	cr_assert(sbpl_put_string(&b, "a\"b\\c", 5));
	char *s = str_of(&b);
	cr_assert_str_eq(s, "\"a\\\"b\\\\c\"");
	free(s);
}

Test(sbpl_string, refuses_control_characters)
{
	struct sbpl_buf b = { 0 };
	cr_assert_not(sbpl_put_string(&b, "a\nb", 3));
	cr_assert_not(sbpl_put_string(&b, "a\tb", 3));
	cr_assert_not(sbpl_put_string(&b, "a\x7f", 2));
	sbpl_buf_free(&b);
}

Test(sbpl_string, length_limit_counts_escapes)
{
	char s[SBPL_MAX_STRING + 8];
	struct sbpl_buf b = { 0 };
	memset(s, 'a', sizeof(s));
	cr_assert(sbpl_put_string(&b, s, SBPL_MAX_STRING - 2)); /* + 2 quotes = limit */
	cr_assert_not(sbpl_put_string(&b, s, SBPL_MAX_STRING - 1));
	memset(s, '"', sizeof(s));
	cr_assert_not(sbpl_put_string(&b, s, SBPL_MAX_STRING / 2)); /* doubles when escaped */
	sbpl_buf_free(&b);
}

Test(sbpl_string, comment_text_cannot_end_the_comment)
{
	struct sbpl_buf b = { 0 };
	sbpl_put_comment_text(&b, "x\n(allow default)\r");
	char *s = str_of(&b);
	cr_assert_str_eq(s, "x?(allow default)?");
	free(s);
}

/* ---- regexes ---- */

static char *glob_re(const char *g)
{
	struct sbpl_buf b = { 0 };
	sbpl_glob_regex(&b, g, strlen(g));
	return str_of(&b);
}

Test(sbpl_regex, anchored_and_escaped)
{
	char *r = glob_re("/a.b+c(1)[x]{y}^$|\\d/*.txt");
	cr_assert_str_eq(r, "^/a\\.b\\+c\\(1\\)\\[x\\]\\{y\\}\\^\\$\\|\\\\d/[^/]*\\.txt$");
	free(r);
	r = glob_re("/a/*/b");
	cr_assert_str_eq(r, "^/a/[^/]+/b$", "a lone star never matches an empty component");
	free(r);
	r = glob_re("/src/**/?.c");
	cr_assert_str_eq(r, "^/src(/.*)?/[^/\x80-\xbf][\x80-\xbf]*\\.c$",
			 "? is one UTF-8 character: a non-continuation byte and its continuation");
	free(r);
	r = glob_re("/a/**/**/b/**");
	cr_assert_str_eq(r, "^/a(/.*)?(/.*)?/b(/.*)?$");
	free(r);
}

/* The regex must accept exactly what the IR matcher accepts. */
static void agree(const char *glob, const char *const *paths, size_t n)
{
	char *r = glob_re(glob);
	regex_t re;
	cr_assert_eq(regcomp(&re, r, REG_EXTENDED | REG_NOSUB), 0, "regcomp %s", r);
	struct ir_path p = { .text = glob };
	path_classify(&p);
	for (size_t i = 0; i < n; i++) {
		bool want = path_match(&p, paths[i]);
		bool got = regexec(&re, paths[i], 0, NULL, 0) == 0;
		cr_expect_eq(got, want, "%s vs %s: regex %s says %d, IR says %d", glob, paths[i],
			     r, got, want);
	}
	regfree(&re);
	free(r);
}

Test(sbpl_regex, agrees_with_ir_matcher)
{
	static const char *const paths[] = {
		"/", "/a", "/a/b", "/a/b/c", "/a/x/b", "/a/x/y/b", "/ab", "/a/bb", "/a.b",
		"/axb", "/a/b.c", "/a/bc", "/src/x.c", "/src/a/b/x.c", "/src/xy.c",
		"/a(1)/b", "/a+/b", "/x/.env", "/.env", "/x/y/.env", "/x/.envrc",
		"/Users/al/.ssh/id_rsa", "/Users/al/.ssh", "/a/b/c/d",
		/* non-ASCII: one character of 2, 3 and 4 bytes, as names on disk
		 * spell them (UTF-8) */
		"/U\xc3\xbc" "ers", "/Users", "/U\xc3\xbc\xc3\xbc" "ers", "/a\xe2\x82\xac" "b",
		"/a/\xf0\x9f\x98\x80", "/a/\xf0\x9f\x98\x80/b", "/\xc3\xa9/.env", "/a/\xc3\xa9x",
	};
	static const char *const globs[] = {
		"/a/*", "/a/**", "/a/**/b", "/a/*/b", "/a?b", "/a.b", "/a/b*", "/**/.env",
		"/src/**/?.c", "/a(1)/*", "/a+/b", "/*/.env", "/Users/*/.ssh/**", "/a/**/**/d",
		"/**", "/*", "/a/*/*/d", "/**/*", "/*/**", "/a*", "/*a",
		"/U?ers", "/U??ers", "/a?b", "/a/?", "/a/??", "/a/????", "/a/?/b", "/?/.env",
		"/a/*?", "/a/?x", "/U\xc3\xbc*", "/*\xc3\xbc*",
	};
	for (size_t i = 0; i < sizeof(globs) / sizeof(globs[0]); i++)
		agree(globs[i], paths, sizeof(paths) / sizeof(paths[0]));
}

/* ---- path filters and the /private links ---- */

static char *filters(const char *pat, bool deny)
{
	struct ir_path p = { .text = pat };
	path_classify(&p);
	struct sbpl_buf b = { 0 };
	struct sbpl_filter_opts o = { .deny = deny, .indent = "" };
	const char *err = NULL;
	cr_assert(sbpl_put_path_filters(&b, &p, &o, &err), "%s", err ? err : "");
	return str_of(&b);
}

Test(sbpl_paths, links_resolve_to_private)
{
	char *f = filters("/tmp/x", false);
	cr_assert_str_eq(f, "(literal \"/private/tmp/x\")\n");
	free(f);
	f = filters("/etc/**", false);
	cr_assert_str_eq(f, "(subpath \"/private/etc\")\n");
	free(f);
	f = filters("/tmpx/y", false);
	cr_assert_str_eq(f, "(literal \"/tmpx/y\")\n");
	free(f);
	f = filters("/var/folders/*/*/T/**", false);
	cr_assert_str_eq(f, "(regex \"^/private/var/folders/[^/]+/[^/]+/T(/.*)?$\")\n");
	free(f);
}

Test(sbpl_paths, deny_subtree_has_literal_and_subpath)
{
	char *f = filters("/Users/a/.ssh/**", true);
	cr_assert_str_eq(f, "(literal \"/Users/a/.ssh\")\n(subpath \"/Users/a/.ssh\")\n");
	free(f);
	f = filters("/Users/a/.ssh/**", false);
	cr_assert_str_eq(f, "(subpath \"/Users/a/.ssh\")\n");
	free(f);
}

/* A glob whose first component is a pattern may match under a link: the
 * /private spellings are added, each as its own filter (no alternation,
 * so no single string grows with the number of links). */
Test(sbpl_paths, glob_first_component_gets_private_variants)
{
	char *f = filters("/*/cache", false);
	cr_assert_str_eq(f, "(require-all (regex \"^/[^/]+/cache$\") "
			    "(require-not (regex \"^/private/(tmp|var|etc)(/.*)?$\")))\n"
			    "(regex \"^/private/tmp/cache$\")\n"
			    "(regex \"^/private/var/cache$\")\n"
			    "(regex \"^/private/etc/cache$\")\n");
	free(f);
	/* matches /tmp itself: the resolved directory is written as a literal */
	f = filters("/t*", false);
	cr_assert_str_eq(f, "(require-all (regex \"^/t[^/]*$\") "
			    "(require-not (regex \"^/private/(tmp|var|etc)(/.*)?$\")))\n"
			    "(literal \"/private/tmp\")\n");
	free(f);
	/* a literal first component other than a link needs nothing more */
	f = filters("/Users/*/.env", false);
	cr_assert_str_eq(f, "(regex \"^/Users/[^/]+/\\\\.env$\")\n");
	free(f);
}

/* The quoted literals of one filter line, unescaped, in order. */
static size_t literals(const char *line, char **out, size_t max)
{
	size_t n = 0;
	for (const char *q = strchr(line, '"'); q && n < max; q = strchr(q, '"')) {
		char *o = malloc(strlen(q) + 1);
		size_t k = 0;
		for (q++; *q && *q != '"'; q++) {
			if (*q == '\\')
				q++;
			o[k++] = *q;
		}
		o[k] = '\0';
		out[n++] = o;
		if (*q)
			q++;
	}
	return n;
}

static bool regex_ok(const char *re, const char *s)
{
	regex_t r;
	cr_assert_eq(regcomp(&r, re, REG_EXTENDED | REG_NOSUB), 0, "regcomp %s", re);
	bool m = regexec(&r, s, 0, NULL, 0) == 0;
	regfree(&r);
	return m;
}

/* Does one filter line as the emitter writes it match `path`? */
static bool line_matches(const char *line, const char *path)
{
	char *lit[4];
	size_t n = literals(line, lit, 4);
	bool m = false;
	if (strncmp(line, "(require-all (regex", 19) == 0) {
		cr_assert_eq(n, 2, "%s", line);
		m = regex_ok(lit[0], path) && !regex_ok(lit[1], path);
	} else if (strncmp(line, "(regex", 6) == 0) {
		m = regex_ok(lit[0], path);
	} else if (strncmp(line, "(literal", 8) == 0) {
		m = strcmp(lit[0], path) == 0;
	} else {
		cr_assert_fail("unexpected filter line %s", line);
	}
	for (size_t i = 0; i < n; i++)
		free(lit[i]);
	return m;
}

static bool filters_match(const char *f, const char *path)
{
	bool got = false;
	char *dup = strdup(f), *save = NULL;
	for (char *line = strtok_r(dup, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		got |= line_matches(line, path);
	free(dup);
	return got;
}

/* Applied to resolved paths, the filters of a glob must agree with the IR
 * matcher applied to the /tmp spelling under a link target, and to the
 * path itself anywhere else (including /private/x, which is no link). */
Test(sbpl_paths, variants_agree_with_ir_on_link_paths)
{
	static const char *const globs[] = { "/*/x", "/t?p/*", "/*/**", "/?mp/a/**/b", "/*",
					     "/t*", "/*p/*", "/*/*/b", "/**/x", "/**/*/tmp/x",
					     "/*/*/*", "/p*/**", "/tmp/*/x", "/private/*" };
	static const char *const rest[] = { "", "/x", "/y", "/a/b", "/a/q/b", "/x/y", "/tmp/x" };
	static const char *const lnk[] = { "tmp", "var", "etc" };
	static const char *const plain[] = { "/private/x", "/private", "/usr/x", "/a/x", "/p/q/r",
					     "/x", "/privatex/tmp/x" };
	for (size_t g = 0; g < sizeof(globs) / sizeof(globs[0]); g++) {
		struct ir_path p = { .text = globs[g] };
		path_classify(&p);
		char *f = filters(globs[g], false);
		for (size_t l = 0; l < 3; l++) {
			for (size_t r = 0; r < sizeof(rest) / sizeof(rest[0]); r++) {
				char ir_path[64], real[64];
				snprintf(ir_path, sizeof(ir_path), "/%s%s", lnk[l], rest[r]);
				snprintf(real, sizeof(real), "/private/%s%s", lnk[l], rest[r]);
				bool want = path_match(&p, ir_path);
				if (strncmp(globs[g], "/private/", 9) == 0)
					want = path_match(&p, real); /* spelled /private: as written */
				bool got = filters_match(f, real);
				cr_expect_eq(got, want, "%s on %s: sbpl %d, ir %d\n%s", globs[g], real,
					     got, want, f);
			}
		}
		for (size_t k = 0; k < sizeof(plain) / sizeof(plain[0]); k++) {
			bool want = path_match(&p, plain[k]);
			bool got = filters_match(f, plain[k]);
			cr_expect_eq(got, want, "%s on %s: sbpl %d, ir %d\n%s", globs[g], plain[k], got,
				     want, f);
		}
		free(f);
	}
}

/* ---- whole profiles ---- */

Test(sbpl_profile, header_and_enforce_defaults)
{
	char *t = emit_ok("cage 1\nprofile dev {\n allow read \"/opt/x/**\"\n}\n");
	cr_assert(strncmp(t, ";; Seatbelt profile generated by cagec " CAGE_VERSION_STRING, 40) == 0);
	cr_assert(strstr(t, ";; source fingerprint: xxh3:"));
	cr_assert(strstr(t, ";; profile: dev   mode: enforce\n"));
	cr_assert(strstr(t, ";; sandbox-exec parameters: none\n"));
	size_t v = at(t, "\n(version 1)\n"), d = at(t, "\n(deny default)\n");
	cr_assert_lt(v, d);
	cr_assert_null(strstr(t, "PROXY_PORT"));
	cr_assert_null(strstr(t, "network-outbound"), "no egress without connect rules");
	free(t);
}

Test(sbpl_profile, network_only_to_the_proxy_param)
{
	char *t = emit_ok("cage 1\nprofile p {\n allow connect \"github.com:443\"\n}\n");
	cr_assert(strstr(t, ";;   -D PROXY_PORT=PORT"));
	cr_assert(strstr(t, "(allow network-outbound (remote tcp (string-append \"localhost:\" "
			    "(param \"PROXY_PORT\"))))\n"));
	cr_assert_null(strstr(t, "github.com\")"), "host names never reach SBPL filters");
	/* the only network-outbound allow is the proxy's */
	const char *p = t;
	size_t n = 0;
	while ((p = strstr(p, "(allow network-outbound")))
		n++, p++;
	cr_assert_eq(n, 1);
	free(t);
}

Test(sbpl_profile, loopback_ports_are_direct_and_ordered)
{
	char *t = emit_ok("cage 1\nprofile p {\n allow connect \"localhost:3000-3001\"\n"
			  " deny connect \"localhost:3001\"\n}\n");
	size_t a = at(t, "(allow network-outbound\n  (remote tcp \"localhost:3000\")");
	size_t d = at(t, "(deny network-outbound\n  (remote tcp \"localhost:3001\")");
	cr_assert_lt(a, d);
	cr_assert_null(strstr(t, "PROXY_PORT"), "loopback alone needs no proxy");
	free(t);
}

Test(sbpl_profile, overlapping_allow_deny_share_operations)
{
	char *t = emit_ok("cage 1\nprofile p {\n allow read write \"/w/**\"\n"
			  " deny write \"/w/.git/hooks/**\"\n}\n");
	/* the deny names exactly the write operations the allow names */
	cr_assert(strstr(t, "(allow file-read-data file-read-xattr file-read-metadata "
			    "file-test-existence file-write-data file-write-mode file-write-owner "
			    "file-write-times file-write-flags file-write-xattr file-write-acl "
			    "file-write-finderinfo file-write-create file-link file-clone "
			    "file-write-unlink\n  (subpath \"/w\")"));
	cr_assert(strstr(t, "(deny file-write-data file-write-mode file-write-owner "
			    "file-write-times file-write-flags file-write-xattr file-write-acl "
			    "file-write-finderinfo file-write-create file-link file-clone "
			    "file-write-unlink\n  (literal \"/w/.git/hooks\")"));
	cr_assert_null(strstr(t, "file-write* "), "no wildcard operations in policy rules");
	cr_assert_null(strstr(t, "file-read* "), "no wildcard operations in policy rules");
	free(t);
}

Test(sbpl_profile, protect_is_written_last)
{
	char *t = emit_ok("cage 1\nprotect \"~/.ssh/**\"\nprofile p {\n"
			  " allow read \"~/**\"\n}\n");
	size_t allow = at(t, "(subpath \"/Users/alice\")");
	size_t prot = at(t, "(subpath \"/Users/alice/.ssh\")");
	cr_assert_lt(allow, prot, "protect must follow every allow");
	cr_assert(strstr(t, "(deny file-read-data"));
	free(t);
}

Test(sbpl_profile, monitor_blocks_nothing_and_reports_denies)
{
	char *t = emit_ok("cage 1\nprotect \"~/.ssh/**\"\nprofile p {\n mode monitor\n"
			  " allow read \"/x/**\"\n deny read \"/x/y/**\"\n}\n");
	cr_assert(strstr(t, "(allow default (with report))\n"));
	cr_assert_null(strstr(t, "(deny "), "monitor mode must not deny anything");
	cr_assert(strstr(t, "(allow file-read-data file-read-xattr file-read-metadata "
			    "file-test-existence (with report)\n  (literal \"/x/y\")"));
	free(t);
}

Test(sbpl_profile, enforce_fs_opens_the_network_only)
{
	char *t = emit_ok("cage 1\nprofile p {\n mode enforce-fs\n allow connect \"a.com\"\n"
			  " allow read \"/x/**\"\n}\n");
	cr_assert(strstr(t, "(deny default)"));
	cr_assert(strstr(t, "(allow network-outbound (remote ip \"*:*\"))"));
	cr_assert_null(strstr(t, "PROXY_PORT"));
	cr_assert_null(strstr(t, "(allow network*)"), "unix sockets stay under the policy");
	free(t);
}

Test(sbpl_profile, mode_off_has_no_profile)
{
	const char *err = NULL;
	char *t = emit_text("cage 1\nprofile p {\n mode off\n}\n", &err);
	cr_assert_null(t);
	cr_assert(err && strncmp(err, "mode off: no profile", 20) == 0, "%s", err ? err : "");
	free((char *)err);
}

Test(sbpl_profile, too_long_path_is_an_error_not_a_broken_profile)
{
	char src[3000];
	char name[1200];
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	snprintf(src, sizeof(src), "cage 1\nprofile p {\n allow read \"/x/%s\"\n}\n", name);
	const char *err = NULL;
	char *t = emit_text(src, &err);
	cr_assert_null(t);
	cr_assert(err && strstr(err, "t.cage:3:"), "error names the rule: %s", err ? err : "");
	free((char *)err);
}

Test(sbpl_profile, unix_and_mach_only_when_named)
{
	char *t = emit_ok("cage 1\nprofile p {\n allow read \"/x/**\"\n}\n");
	cr_assert_null(strstr(t, "unix-socket"));
	cr_assert_null(strstr(t, "AF_UNIX"));
	cr_assert_null(strstr(t, "trustd"));
	free(t);
	t = emit_ok("cage 1\nprofile p {\n allow unix \"/var/run/docker.sock\"\n"
		    " allow mach \"com.apple.trustd.agent\", \"com.example.*\"\n}\n");
	cr_assert(strstr(t, "(allow system-socket (socket-domain AF_UNIX))"));
	cr_assert(strstr(t, "(remote unix-socket (path-literal \"/private/var/run/docker.sock\"))"));
	cr_assert(strstr(t, "(global-name \"com.apple.trustd.agent\")"));
	cr_assert(strstr(t, "(global-name-prefix \"com.example.\")"));
	free(t);
}

Test(sbpl_profile, deterministic)
{
	const char *src = "cage 1\nprotect \"~/.aws/**\"\nprofile p {\n allow read write \"~/src/**\"\n"
			  " allow read \"/*/cache\", \"/usr/**\"\n allow connect \"x.org\", \"localhost:80\"\n"
			  " private tmp home\n}\n";
	char *a = emit_ok(src), *b = emit_ok(src);
	cr_assert_str_eq(a, b);
	free(a);
	free(b);
}

Test(sbpl_ops, access_bits_have_disjoint_operations)
{
	static const uint32_t bits[] = { IR_A_READ, IR_A_READ_META, IR_A_WRITE,
					 IR_A_CREATE, IR_A_DELETE, IR_A_EXEC };
	for (size_t i = 0; i < 6; i++) {
		size_t n;
		const char *const *a = sbpl_file_ops(bits[i], &n);
		cr_assert(a && n > 0);
		for (size_t k = 0; k < n; k++) {
			cr_assert_null(strchr(a[k], '*') && strcmp(a[k], "process-exec*") ? a[k] : NULL,
				       "wildcard %s", a[k]);
			for (size_t j = i + 1; j < 6; j++) {
				size_t m;
				const char *const *b = sbpl_file_ops(bits[j], &m);
				for (size_t q = 0; q < m; q++)
					cr_assert_str_neq(a[k], b[q]);
			}
		}
	}
	size_t n;
	cr_assert_null(sbpl_file_ops(IR_A_CONNECT, &n));
	cr_assert_eq(n, 0);
}

Test(sbpl_profile, directories_above_protected_paths_cannot_be_renamed)
{
	char *t = emit_ok("cage 1\nprotect \"~/.config/gh/hosts.yml\"\nprofile p {\n"
			  " allow read write \"~/.config/**\"\n}\n");
	size_t blk = at(t, "(deny file-write-unlink file-link\n");
	size_t gh = at(t, "  (literal \"/Users/alice/.config/gh\") ; ");
	cr_assert_lt(blk, gh);
	cr_assert(strstr(t, "  (literal \"/Users/alice/.config\") ; "));
	cr_assert_lt(at(t, "(subpath \"/Users/alice/.config\")"), blk, "after the allows");
	free(t);
}

Test(sbpl_profile, other_terminals_need_the_pty_extension)
{
	char *t = emit_ok("cage 1\nprofile p {\n allow read \"/x/**\"\n}\n");
	cr_assert(strstr(t, "(require-all (regex \"^/dev/ttys[0-9]+$\") "
			    "(extension \"com.apple.sandbox.pty\"))"));
	cr_assert(strstr(t, "(allow file-ioctl (regex \"^/dev/ttys[0-9]+$\"))"));
	free(t);
}

Test(sbpl_profile, offline_preset_does_not_reach_the_proxy)
{
	char *t = emit_ok("cage 1\nprotect connect \"*\"\nprofile p {\n"
			  " allow connect \"github.com:443\"\n}\n");
	cr_assert_null(strstr(t, "PROXY_PORT"));
	free(t);
	t = emit_ok("cage 1\nprotect connect \"*\"\nprofile p {\n"
		    " allow connect \"192.0.2.1:443\"\n}\n");
	cr_assert(strstr(t, "PROXY_PORT"), "an IP literal is not a name: the proxy decides");
	free(t);
}

Test(sbpl_profile, proxy_port_survives_loopback_protect)
{
	char *t = emit_ok("cage 1\nprotect connect \"localhost\"\nprofile p {\n"
			  " allow connect \"github.com:443\"\n}\n");
	size_t deny = at(t, "(deny network-outbound\n  (remote tcp \"localhost:*\")");
	size_t proxy = at(t, "(allow network-outbound (remote tcp (string-append");
	cr_assert_lt(deny, proxy, "cagerun's proxy is opened after every policy rule");
	free(t);
}
