/*
 * test_sbpl_eval.c - unit tests of the test-only SBPL evaluator
 * (testsuite/lib/sbpl_eval.h). Apple documents none of Seatbelt's decision
 * rules, so every semantic test names the public source the fact comes from;
 * the evaluator is only as right as these sources.
 */
#include <criterion/criterion.h>
#include <locale.h>
#ifdef __APPLE__
#include <xlocale.h> /* locale_t, newlocale, uselocale: not in <locale.h> there */
#endif
#include <stdio.h>
#include <stdlib.h> /* MB_CUR_MAX */
#include <string.h>

#include "sbpl_eval.h"

static char err[512];

static struct sbpl_eval_profile *load_p(const char *text, const struct sbpl_eval_param *ps, size_t n)
{
	err[0] = '\0';
	struct sbpl_eval_profile *p = sbpl_eval_parse(text, strlen(text), ps, n, err, sizeof(err));
	cr_assert(p, "profile should load: %s\n%s", err, text);
	return p;
}

static struct sbpl_eval_profile *load(const char *text)
{
	return load_p(text, NULL, 0);
}

static void refused(const char *text, const char *want)
{
	err[0] = '\0';
	struct sbpl_eval_profile *p = sbpl_eval_parse(text, strlen(text), NULL, 0, err, sizeof(err));
	cr_assert_null(p, "profile should be refused:\n%s", text);
	cr_assert(strstr(err, want), "error \"%s\" should contain \"%s\"", err, want);
}

static struct sbpl_eval_result path_q(const struct sbpl_eval_profile *p, const char *op, const char *path)
{
	struct sbpl_eval_result r;
	cr_assert(sbpl_eval_decide_path(p, op, path, &r, err, sizeof(err)), "%s", err);
	return r;
}

static bool allowed(const struct sbpl_eval_profile *p, const char *op, const char *path)
{
	return path_q(p, op, path).allowed;
}

static bool net_ok(const struct sbpl_eval_profile *p, enum sbpl_eval_proto pr, const char *host, unsigned port)
{
	struct sbpl_eval_result r;
	cr_assert(sbpl_eval_decide_net(p, "network-outbound", pr, host, port, &r, err, sizeof(err)),
		  "%s", err);
	return r.allowed;
}

/* ---- the operation table ---- */

/* Source: /work/shared/sbpl-operations.tsv, from 0xbf00/simbple
 * src/platform_data/catalina/operations.c (macOS 10.15 data). */
Test(sbpl_ops, fallback_chain_of_file_read_data)
{
	const struct sbpl_eval_op *o = sbpl_eval_op_find("file-read-data");
	cr_assert_str_eq(o->parent, "file-read*");
	o = sbpl_eval_op_find(o->parent);
	cr_assert_str_eq(o->parent, "file*");
	o = sbpl_eval_op_find(o->parent);
	cr_assert_str_eq(o->parent, "default");
	cr_assert_str_eq(sbpl_eval_op_find("file-write-unlink")->parent, "file-write*");
	cr_assert_str_eq(sbpl_eval_op_find("network-outbound")->parent, "network*");
	cr_assert_str_eq(sbpl_eval_op_find("mach-lookup")->parent, "mach*");
	size_t n;
	sbpl_eval_op_table(&n);
	cr_assert_eq(n, 145);
}

/* Source: 0xbf00/simbple src/scm/sbpl_v1.scm, ";;; Aliases":
 * (define process-exec process-exec*). */
Test(sbpl_ops, process_exec_is_an_alias)
{
	cr_assert_str_eq(sbpl_eval_op_canonical("process-exec"), "process-exec*");
	struct sbpl_eval_profile *p = load("(version 1)(deny default)(allow process-exec (literal \"/bin/ls\"))");
	cr_assert(allowed(p, "process-exec*", "/bin/ls"));
	cr_assert_eq(sbpl_eval_unknown_ops(p, NULL), 0);
	sbpl_eval_free(p);
}

/* ---- decision semantics ---- */

/* Source: /work/shared/sbpl-operations.tsv (simbple's catalina table):
 * file-read-data falls back to file-read*, then file*, then default. */
Test(sbpl_eval_decide, unmatched_operation_falls_back_to_its_parent)
{
	struct sbpl_eval_profile *p = load("(version 1)\n(deny default)\n"
				      "(allow file-read* (subpath \"/r\"))\n"
				      "(allow file* (subpath \"/f\"))\n");
	struct sbpl_eval_result r = path_q(p, "file-read-data", "/r/x");
	cr_assert(r.allowed);
	cr_assert_str_eq(r.op, "file-read*");
	cr_assert_eq(r.line, 3);
	r = path_q(p, "file-read-data", "/f/x");
	cr_assert(r.allowed);
	cr_assert_str_eq(r.op, "file*");
	r = path_q(p, "file-write-data", "/r/x");
	cr_assert_not(r.allowed);
	cr_assert(r.by_default);
	cr_assert_eq(r.line, 2);
	sbpl_eval_free(p);
}

/* Source: SII-Holos/synergy PR #1440 ("Seatbelt does not rank by specificity
 * - it applies the last matching rule. Measured ... allow-then-deny blocked
 * the read, deny-then-allow served it"); microsoft/mxc PR #754 measures the
 * same for network rules. */
Test(sbpl_eval_decide, last_matching_rule_on_the_same_operation_wins)
{
	struct sbpl_eval_profile *p = load("(version 1)(deny default)\n"
				      "(allow file-read* (subpath \"/w\"))\n"
				      "(deny file-read* (subpath \"/w/secret\"))\n");
	cr_assert(allowed(p, "file-read-data", "/w/a"));
	cr_assert_not(allowed(p, "file-read-data", "/w/secret/k"));
	cr_assert_eq(path_q(p, "file-read-data", "/w/secret/k").line, 3);
	sbpl_eval_free(p);
	p = load("(version 1)(deny default)\n"
		 "(deny file-read* (subpath \"/w/secret\"))\n"
		 "(allow file-read* (subpath \"/w\"))\n");
	cr_assert(allowed(p, "file-read-data", "/w/secret/k"));
	sbpl_eval_free(p);
}

/* Source: GreyhavenHQ/greywall PR #20, measured with sandbox-exec:
 * (allow file-read-data (subpath "/")) then (deny file-read* (literal F))
 * leaves F readable; only (deny file-read-data (literal F)) blocks it.
 * fencesandbox/fence PR #218 relies on the converse ("a specific allow is
 * not overridden by a wildcard deny"). */
Test(sbpl_eval_decide, specific_operation_beats_wildcard_parent_in_any_order)
{
	struct sbpl_eval_profile *p = load("(version 1)(deny default)\n"
				      "(allow file-read-data (subpath \"/\"))\n"
				      "(deny file-read* (literal \"/p/.env\"))\n");
	cr_assert(allowed(p, "file-read-data", "/p/.env"));
	cr_assert_not(allowed(p, "file-read-metadata", "/p/.env"));
	sbpl_eval_free(p);
	p = load("(version 1)(deny default)\n"
		 "(deny file-read* (literal \"/p/.env\"))\n"
		 "(allow file-read-data (subpath \"/\"))\n");
	cr_assert(allowed(p, "file-read-data", "/p/.env"));
	sbpl_eval_free(p);
	p = load("(version 1)(deny default)\n"
		 "(allow file-read-data (subpath \"/\"))\n"
		 "(deny file-read-data (literal \"/p/.env\"))\n");
	cr_assert_not(allowed(p, "file-read-data", "/p/.env"));
	sbpl_eval_free(p);
}

/* Source: microsoft/mxc PR #754: "an unfiltered allow cannot override a
 * path-filtered deny in either order"; "last-match-wins between rules that
 * carry a filter". */
Test(sbpl_eval_decide, filterless_rule_is_the_operation_default)
{
	struct sbpl_eval_profile *p = load("(version 1)(deny default)\n"
				      "(deny network-outbound (remote tcp \"localhost:22\"))\n"
				      "(allow network-outbound)\n");
	cr_assert_not(net_ok(p, SBPL_EVAL_TCP, "localhost", 22));
	cr_assert(net_ok(p, SBPL_EVAL_TCP, "localhost", 80));
	sbpl_eval_free(p);
	p = load("(version 1)(deny default)\n"
		 "(allow network-outbound)\n"
		 "(deny network-outbound (remote tcp \"localhost:22\"))\n");
	cr_assert_not(net_ok(p, SBPL_EVAL_TCP, "localhost", 22));
	sbpl_eval_free(p);
	/* Among filterless rules the last one stands. */
	p = load("(version 1)(deny default)(allow default)");
	struct sbpl_eval_result r = path_q(p, "file-write-data", "/x");
	cr_assert(r.allowed && r.by_default);
	sbpl_eval_free(p);
}

/* Source: 0xbf00/simbple src/scm/sbpl_v1.scm, macro with-filter: a rule's
 * filters are combined as (apply require-any filters). Chromium's profiles
 * list alternatives the same way, e.g. (allow file-read* (regex #"^/System/
 * Library/ColorSync($|/)") (regex #"^/System/Library/Keyboard Layouts($|/)")). */
Test(sbpl_eval_decide, filters_in_one_rule_are_ored)
{
	struct sbpl_eval_profile *p = load("(version 1)(deny default)\n"
				      "(allow file-read* (literal \"/a\") (subpath \"/b\"))\n"
				      "(allow file-write* (require-all (subpath \"/c\") (regex #\"\\.txt$\")))\n"
				      "(allow file-write-unlink (require-any (literal \"/d\") (literal \"/e\")))\n"
				      "(deny file-write-data (require-not (subpath \"/c/keep\")))\n");
	cr_assert(allowed(p, "file-read-data", "/a"));
	cr_assert(allowed(p, "file-read-data", "/b/x"));
	cr_assert_not(allowed(p, "file-read-data", "/c"));
	cr_assert(allowed(p, "file-write-create", "/c/x.txt"));
	cr_assert_not(allowed(p, "file-write-create", "/c/x.bin"));
	cr_assert_not(allowed(p, "file-write-create", "/z/x.txt"));
	cr_assert(allowed(p, "file-write-unlink", "/e"));
	cr_assert_not(allowed(p, "file-write-data", "/c/x.txt"));
	cr_assert(allowed(p, "file-write-data", "/c/keep/x.txt"));
	sbpl_eval_free(p);
}

/* Source: Chromium's mac sandbox profiles replaced
 * (regex #"^/System/Library/Fonts($|/)") by (subpath "/System/Library/Fonts"):
 * a subpath is the directory itself and everything below it, not a string
 * prefix. `literal` is exact, and `prefix` is path-prefix, a plain string
 * prefix (0xbf00/simbple src/scm/sbpl_v1.scm: (define prefix path-prefix)). */
Test(sbpl_eval_decide, literal_subpath_prefix)
{
	struct sbpl_eval_profile *p = load("(version 1)(deny default)\n"
				      "(allow file-read* (subpath \"/u/a\"))\n"
				      "(allow file-write* (literal \"/u/f\"))\n"
				      "(allow file-ioctl (prefix \"/dev/tty\"))\n");
	cr_assert(allowed(p, "file-read-data", "/u/a"));
	cr_assert(allowed(p, "file-read-data", "/u/a/b/c"));
	cr_assert_not(allowed(p, "file-read-data", "/u/ab"));
	cr_assert_not(allowed(p, "file-read-data", "/u"));
	cr_assert(allowed(p, "file-write-data", "/u/f"));
	cr_assert_not(allowed(p, "file-write-data", "/u/f/g"));
	cr_assert(allowed(p, "file-ioctl", "/dev/ttys003"));
	cr_assert(allowed(p, "file-ioctl", "/dev/tty"));
	sbpl_eval_free(p);
}

/* Source: valon-technologies/gestalt PR #382 review: (regex #"^/tmp/x")
 * also matches /tmp/xyz/evil.txt - a regex is a search, anchored only by
 * what it writes; Chromium writes ^...($|/) for that reason. */
Test(sbpl_eval_decide, regex_is_a_search)
{
	struct sbpl_eval_profile *p = load("(version 1)(deny default)\n"
				      "(allow file-read* (regex #\"secret\"))\n"
				      "(allow file-write* (regex \"^/w/[^/]*\\\\.log$\"))\n");
	cr_assert(allowed(p, "file-read-data", "/a/secret/b"));
	cr_assert(allowed(p, "file-read-data", "/xsecrety"));
	cr_assert(allowed(p, "file-write-data", "/w/a.log"));
	cr_assert_not(allowed(p, "file-write-data", "/w/alog"));
	cr_assert_not(allowed(p, "file-write-data", "/w/d/a.log"));
	cr_assert_not(allowed(p, "file-write-data", "/x/w/a.log"));
	sbpl_eval_free(p);
}

/* Seatbelt's regexes match bytes (paths reach the kernel as UTF-8 bytes),
 * so `[^/]` takes one byte of 'ü', not the character, even when the
 * caller's locale is a UTF-8 one. The test needs that locale: where it is
 * missing the test fails, since without it the evaluator's own switch to
 * the C locale would not be exercised. glibc always has C.UTF-8; macOS has
 * no C.UTF-8 but always en_US.UTF-8. */
#ifdef __APPLE__
#define UTF8_LOCALE "en_US.UTF-8"
#else
#define UTF8_LOCALE "C.UTF-8"
#endif
Test(sbpl_eval_decide, regex_matches_bytes)
{
	locale_t utf8 = newlocale(LC_CTYPE_MASK, UTF8_LOCALE, (locale_t)0);
	cr_assert_neq(utf8, (locale_t)0, "no %s locale here: this test needs one", UTF8_LOCALE);
	locale_t was = uselocale(utf8);
	cr_assert_neq(was, (locale_t)0);
	/* In effect for this thread: a character may take more than a byte. */
	size_t mb_max = MB_CUR_MAX;
	struct sbpl_eval_profile *p = load("(version 1)(deny default)\n"
				      "(allow file-read* (regex \"^/U[^/]ers$\"))\n"
				      "(allow file-write* (regex \"^/U[^/][^/]ers$\"))\n");
	uselocale(was);
	freelocale(utf8);
	cr_assert_gt(mb_max, 1, "%s is not a multibyte locale here", UTF8_LOCALE);
	cr_assert(allowed(p, "file-read-data", "/Users"));
	cr_assert_not(allowed(p, "file-read-data", "/U\xc3\xbc" "ers"), "one byte of two");
	cr_assert(allowed(p, "file-write-data", "/U\xc3\xbc" "ers"), "two bytes");
	sbpl_eval_free(p);
}

/* Source: nolabs-ai/nono PR #1764: "Apple's Seatbelt regex matcher silently
 * ignores non-capturing groups", so a (?: pattern never matches there. */
Test(sbpl_eval_parse, non_capturing_group_is_refused)
{
	refused("(version 1)(deny default)(deny file-read* (regex #\"^/a/(?:.*/)?b$\"))",
		"'(?' groups");
}

/* Source: microsoft/mxc issue #946 ("Seatbelt's (remote ...) filters only
 * accept * and localhost"); sandbox-exec's message is "host must be * or
 * localhost in network address". */
Test(sbpl_eval_parse, network_host_must_be_star_or_localhost)
{
	refused("(version 1)(deny default)(allow network-outbound (remote tcp \"127.0.0.1:80\"))",
		"host must be * or localhost");
	refused("(version 1)(deny default)(allow network-outbound (remote tcp \"example.com:443\"))",
		"host must be * or localhost");
	refused("(version 1)(deny default)(allow network-outbound (remote tcp \"localhost\"))",
		"port missing");
	refused("(version 1)(deny default)(allow network-outbound (remote tcp \"*:1-100\"))",
		"invalid port");
	refused("(version 1)(deny default)(allow network-outbound (remote tcp \"localhost:70000\"))",
		"invalid port");
}

/* Source: notes of an agent-guard project measured with sandbox-exec -p on
 * macOS 27.0 (found by text search, repository not named in the index):
 * "localhost:* covers 127.0.0.1, ::1 and 0.0.0.0, but not 127.0.0.2";
 * and `tcp` does not cover UDP while `ip` covers both. */
Test(sbpl_eval_decide, remote_address_matching)
{
	struct sbpl_eval_profile *p = load("(version 1)(deny default)\n"
				      "(allow network-outbound (remote tcp \"localhost:8080\"))\n"
				      "(allow network-outbound (remote ip \"localhost:53\"))\n"
				      "(allow network-outbound (remote udp \"*:123\"))\n");
	cr_assert(net_ok(p, SBPL_EVAL_TCP, "localhost", 8080));
	cr_assert(net_ok(p, SBPL_EVAL_TCP, "127.0.0.1", 8080));
	cr_assert(net_ok(p, SBPL_EVAL_TCP, "::1", 8080));
	cr_assert_not(net_ok(p, SBPL_EVAL_TCP, "127.0.0.2", 8080));
	cr_assert_not(net_ok(p, SBPL_EVAL_TCP, "93.184.216.34", 8080));
	cr_assert_not(net_ok(p, SBPL_EVAL_TCP, "localhost", 8081));
	cr_assert_not(net_ok(p, SBPL_EVAL_UDP, "localhost", 8080));
	cr_assert(net_ok(p, SBPL_EVAL_UDP, "localhost", 53));
	cr_assert(net_ok(p, SBPL_EVAL_TCP, "localhost", 53));
	cr_assert(net_ok(p, SBPL_EVAL_UDP, "93.184.216.34", 123));
	cr_assert_not(net_ok(p, SBPL_EVAL_TCP, "93.184.216.34", 123));
	sbpl_eval_free(p);
}

/* Source: anthropic-experimental/sandbox-runtime issue #225: on
 * network-outbound, (local ip "*:*") matches the socket's own endpoint, so
 * it admits every outbound connection (issue #131: use `remote`). */
Test(sbpl_eval_decide, local_any_admits_every_outbound_connection)
{
	struct sbpl_eval_profile *p = load("(version 1)(deny default)\n"
				      "(allow network-outbound (local ip \"*:*\"))\n");
	cr_assert(net_ok(p, SBPL_EVAL_TCP, "93.184.216.34", 443));
	sbpl_eval_free(p);
	p = load("(version 1)(deny default)(allow network-outbound (local tcp \"localhost:*\"))");
	struct sbpl_eval_result r;
	cr_assert_not(sbpl_eval_decide_net(p, "network-outbound", SBPL_EVAL_TCP, "localhost", 1, &r,
				      err, sizeof(err)));
	cr_assert(strstr(err, "local address"));
	sbpl_eval_free(p);
}

/* Source: 0xbf00/simbple src/scm/sbpl_v1.scm, "Support for old syntax for
 * unix domain sockets": (remote unix-socket (path-literal P)), now written
 * (allow network-outbound (literal P)). */
Test(sbpl_eval_decide, unix_socket_filters)
{
	struct sbpl_eval_profile *p = load("(version 1)(deny default)\n"
				      "(allow network-outbound (remote unix-socket (path-literal \"/var/run/d.sock\")))\n"
				      "(allow network-outbound (literal \"/private/tmp/x.sock\"))\n");
	cr_assert(allowed(p, "network-outbound", "/var/run/d.sock"));
	cr_assert(allowed(p, "network-outbound", "/private/tmp/x.sock"));
	cr_assert_not(allowed(p, "network-outbound", "/var/run/e.sock"));
	cr_assert_not(net_ok(p, SBPL_EVAL_TCP, "localhost", 80));
	sbpl_eval_free(p);
}

/* Source: Chromium's common.sb mac profile: `global-name` names a Mach
 * service, e.g. (allow mach-lookup (global-name "com.apple.FontServer")). */
Test(sbpl_eval_decide, global_name)
{
	struct sbpl_eval_profile *p = load("(version 1)(deny default)\n"
				      "(allow mach-lookup (global-name \"com.apple.trustd.agent\")\n"
				      "                   (global-name-regex #\"^com\\.example\\.\"))\n");
	struct sbpl_eval_result r;
	cr_assert(sbpl_eval_decide_name(p, "mach-lookup", "com.apple.trustd.agent", &r, err, sizeof(err)));
	cr_assert(r.allowed);
	cr_assert(sbpl_eval_decide_name(p, "mach-lookup", "com.example.x", &r, err, sizeof(err)));
	cr_assert(r.allowed);
	cr_assert(sbpl_eval_decide_name(p, "mach-lookup", "com.apple.trustd", &r, err, sizeof(err)));
	cr_assert_not(r.allowed);
	cr_assert(sbpl_eval_decide_name(p, "mach-register", "com.apple.trustd.agent", &r, err,
				   sizeof(err)));
	cr_assert_not(r.allowed);
	sbpl_eval_free(p);
}

/* Source: /work/shared/DESIGN.md "Monitor variant: (allow default (with
 * report))"; 0xbf00/simbple src/sb/rule_base.cpp patch_report() adds
 * (with report) to allow rules to log them. */
Test(sbpl_eval_decide, report_modifier_is_carried)
{
	struct sbpl_eval_profile *p = load("(version 1)\n(deny default)\n(allow default (with report))\n"
				      "(allow file-read* (subpath \"/ok\"))\n"
				      "(allow file-write* (subpath \"/ok\") (with report))\n"
				      "(deny file-write* (literal \"/ok/x\") (with no-report))\n"
				      "(deny process-info* (with send-signal SIGKILL))\n");
	struct sbpl_eval_result r = path_q(p, "file-write-data", "/elsewhere");
	cr_assert(r.allowed && r.report && r.by_default);
	cr_assert_eq(r.line, 3);
	r = path_q(p, "file-read-data", "/ok/y");
	cr_assert(r.allowed && !r.report && !r.by_default);
	r = path_q(p, "file-write-data", "/ok/y");
	cr_assert(r.allowed && r.report);
	r = path_q(p, "file-write-data", "/ok/x");
	cr_assert(!r.allowed && !r.report);
	sbpl_eval_free(p);
	p = load("(version 1)(deny default)\n"
		 "(allow file-read-metadata (with report) (literal \"/m\"))\n");
	r = path_q(p, "file-read-metadata", "/m");
	cr_assert(r.allowed && r.report && r.line == 2);
	sbpl_eval_free(p);
	refused("(version 1)(deny default)(allow file* (with report) (with no-report))",
		"both report and no-report");
	refused("(version 1)(deny default)(allow file* (with telemetry))", "unsupported modifier");
}

/* Source: Chromium's common.sb defines (define (param-defined? str)
 * (string? (param str))): an unset param is not a string but #f, and a #f
 * where a path is expected makes the profile fail to load. */
Test(sbpl_eval_parse, params_and_string_append)
{
	const char *text = "(version 1)(deny default)\n"
			   "(allow file-read* (subpath (param \"WORKSPACE\")))\n"
			   "(allow file-write* (literal (string-append (param \"HOME\") \"/.cfg\")))\n"
			   "(allow network-outbound (remote tcp (string-append \"localhost:\" (param \"PROXY_PORT\"))))\n";
	struct sbpl_eval_param ps[] = { { "WORKSPACE", "/Users/alice/src" },
				   { "HOME", "/Users/alice" },
				   { "PROXY_PORT", "18080" } };
	struct sbpl_eval_profile *p = load_p(text, ps, 3);
	cr_assert(allowed(p, "file-read-data", "/Users/alice/src/main.c"));
	cr_assert(allowed(p, "file-write-data", "/Users/alice/.cfg"));
	cr_assert(net_ok(p, SBPL_EVAL_TCP, "localhost", 18080));
	cr_assert_not(net_ok(p, SBPL_EVAL_TCP, "localhost", 18081));
	sbpl_eval_free(p);
	err[0] = '\0';
	cr_assert_null(sbpl_eval_parse(text, strlen(text), ps, 2, err, sizeof(err)));
	cr_assert(strstr(err, "4:"), "%s", err);
	cr_assert(strstr(err, "PROXY_PORT"), "%s", err);
	struct sbpl_eval_param bad[] = { { "WORKSPACE", "/a" }, { "HOME", "/h" },
				    { "PROXY_PORT", "http" } };
	cr_assert_null(sbpl_eval_parse(text, strlen(text), bad, 3, err, sizeof(err)));
	cr_assert(strstr(err, "invalid port"), "%s", err);
}

/* ---- the reader and the accepted forms ---- */

/* Source: Chromium's mac profiles write regexes both ways:
 * (regex #"^/System/Library/Fonts($|/)") keeps the backslashes of a #"..."
 * literal for the regex, and (regex "^/(private/)?(tmp|var)(/|$)") is an
 * ordinary string; `;` starts a comment (TinyScheme, as in every profile). */
Test(sbpl_eval_parse, strings_comments_and_escapes)
{
	struct sbpl_eval_profile *p = load("; header comment\n"
				      "(version 1) ; trailing\n"
				      "(deny default)\n"
				      "(allow file-read* (literal \"/q/a\\\"b\\\\c\"))\n"
				      "(allow file-write* (regex #\"^/q/x\\.y\\(z\\)$\"))\n");
	cr_assert(allowed(p, "file-read-data", "/q/a\"b\\c"));
	cr_assert(allowed(p, "file-write-data", "/q/x.y(z)"));
	cr_assert_not(allowed(p, "file-write-data", "/q/xzy(z)"));
	cr_assert_eq(sbpl_eval_rule_count(p), 3);
	sbpl_eval_free(p);
}

/* Source: 0xbf00/simbple src/scm/sbpl.scm: (version n) accepts only 1 and
 * "only one version may be specified"; Mozilla's wiki page Sandbox/OS X Rule
 * Set: version=2 fails with "unsupported version". */
Test(sbpl_eval_parse, version)
{
	refused("(deny default)", "must start with (version 1)");
	refused("(version 2)(deny default)", "unsupported version");
	refused("(version 1)(version 1)(deny default)", "only one");
	refused("", "no (version 1)");
}

/* Not a Seatbelt fact but this evaluator's contract (sbpl_eval.h): every
 * form it does not understand is an error with its line and column. */
Test(sbpl_eval_parse, errors_carry_line_numbers)
{
	refused("(version 1)\n(deny default)\n\n(allow file-read* (vnode-type REGULAR-FILE))\n",
		"4:19: unsupported filter 'vnode-type'");
	refused("(version 1)\n(deny default)\n(define x 1)\n", "3:1: unsupported form 'define'");
	refused("(version 1)\n(deny default)\n(allow file-read* (literal \"/a\")\n", "3:1: unbalanced");
	refused("(version 1)\n(deny default))\n", "2:15: unbalanced ')'");
	refused("(version 1)(deny default)(allow file-read* (literal \"/a\\q\"))", "unknown escape");
	refused("(version 1)(deny default)(allow file-read* (literal \"/a", "unterminated string");
	refused("(version 1)(deny default)(allow file-read* 'x)", "unsupported syntax");
	refused("(version 1)(deny default)(allow)", "names no operation");
	refused("(version 1)(deny default)(allow (literal \"/a\"))", "names no operation");
	refused("(version 1)(deny default)(allow file-read* (literal \"/a\") file-write*)",
		"after a filter");
	refused("(version 1)(deny default)(allow File-Read (literal \"/a\"))", "not an operation");
	refused("(version 1)(deny default)(allow file-read* (literal #\"/a\"))", "regex literal");
	refused("(version 1)(deny default)(allow file-read* (literal \"/a\" \"/b\"))",
		"exactly one argument");
	refused("(version 1)(deny default)(allow file-read* (require-not (literal \"/a\") (literal \"/b\")))",
		"exactly one filter");
	refused("(version 1)(deny default)(allow file-read* (regex #\"^/a\\d\"))", "not portable");
	refused("(version 1)(deny default)(allow file-read* (regex #\"^/a[\"))", "regex");
	refused("(version 1)(allow file-read*)", "no filterless rule on `default`");
}

/* Source: /work/shared/DESIGN.md "Paths are matched after resolution": a
 * relative or unnormalised literal can never match, so the evaluator
 * refuses it (our strictness; Seatbelt would load it and never match). */
Test(sbpl_eval_parse, paths_must_be_resolved_forms)
{
	refused("(version 1)(deny default)(allow file-read* (subpath \"rel\"))", "not absolute");
	refused("(version 1)(deny default)(allow file-read* (subpath \"/a/\"))", "ends in '/'");
	refused("(version 1)(deny default)(allow file-read* (literal \"/a//b\"))", "not normalised");
	refused("(version 1)(deny default)(allow file-read* (literal \"/a/../b\"))", "not normalised");
	refused("(version 1)(deny default)(allow file-read* (literal \"/a/./b\"))", "not normalised");
}

/* Source: /work/shared/DESIGN.md: "String literals longer than about 1 KiB
 * fail". */
Test(sbpl_eval_parse, long_strings_are_refused)
{
	char text[4096];
	char path[1100];
	path[0] = '/';
	memset(path + 1, 'a', sizeof(path) - 2);
	path[sizeof(path) - 1] = '\0';
	snprintf(text, sizeof(text), "(version 1)(deny default)(allow file-read* (literal \"%s\"))", path);
	refused(text, "longer than");
}

/* Unknown operations fall back to `default` (DESIGN.md: newer releases add
 * operations) and are counted so tests can insist on known ones. */
Test(sbpl_eval_decide, unknown_operation_falls_back_to_default)
{
	struct sbpl_eval_profile *p = load("(version 1)(deny default)(allow file-frobnicate)");
	const char *first;
	cr_assert_eq(sbpl_eval_unknown_ops(p, &first), 1);
	cr_assert_str_eq(first, "file-frobnicate");
	cr_assert(allowed(p, "file-frobnicate", "/x"));
	struct sbpl_eval_result r = path_q(p, "another-new-op", "/x");
	cr_assert(!r.allowed && r.by_default);
	sbpl_eval_free(p);
}

/* Source: Chromium's mac profiles register Mach services by prefix, e.g.
 * (allow mach-register (global-name-prefix
 * "org.chromium.crashpad.child_port_handshake.")): a plain string prefix. */
Test(sbpl_decide, global_name_prefix)
{
	struct sbpl_eval_profile *p = load("(version 1)(deny default)\n"
					   "(allow mach-lookup (global-name-prefix \"org.test.\"))\n");
	struct sbpl_eval_result r;
	cr_assert(sbpl_eval_decide_name(p, "mach-lookup", "org.test.a", &r, err, sizeof(err)));
	cr_assert(r.allowed);
	cr_assert(sbpl_eval_decide_name(p, "mach-lookup", "org.test", &r, err, sizeof(err)));
	cr_assert_not(r.allowed);
	cr_assert(sbpl_eval_decide_name(p, "mach-lookup", "org.testx.a", &r, err, sizeof(err)));
	cr_assert_not(r.allowed);
	sbpl_eval_free(p);
}

/* Source: openai/codex codex-rs/core/src/seatbelt_base_policy.sbpl writes
 * (allow signal (target same-sandbox)), (sysctl-name "hw.ncpu") and
 * (sysctl-name-prefix "hw.perflevel"); the filter names and the `target`
 * arguments are those of 0xbf00/simbple src/platform_data/catalina/filters.c.
 * Our queries carry no sysctl name or signal target, so such a filter is
 * read and checked, and a query that reaches it is refused, not guessed. */
Test(sbpl_decide, filters_outside_the_query_kinds_are_refused_not_guessed)
{
	struct sbpl_eval_profile *p = load(
		"(version 1)(deny default)\n"
		"(allow signal (target same-sandbox))\n"
		"(allow sysctl-read (sysctl-name \"hw.ncpu\") (sysctl-name-prefix \"hw.perflevel\"))\n"
		"(allow ipc-posix-shm-read-data (ipc-posix-name-prefix \"apple.cfprefs.\"))\n"
		"(allow system-socket (require-all (socket-domain AF_SYSTEM) (socket-protocol 2)))\n"
		"(allow file-read* (subpath \"/w\"))\n");
	cr_assert(allowed(p, "file-read-data", "/w/x"));
	struct sbpl_eval_result r;
	cr_assert_not(sbpl_eval_decide_name(p, "sysctl-read", "hw.ncpu", &r, err, sizeof(err)));
	cr_assert(strstr(err, "sysctl-name"), "%s", err);
	cr_assert_not(sbpl_eval_decide_path(p, "signal", "/x", &r, err, sizeof(err)));
	cr_assert(strstr(err, "target same-sandbox"), "%s", err);
	sbpl_eval_free(p);
	refused("(version 1)(deny default)(allow signal (target everyone))", "does not take");
	refused("(version 1)(deny default)(allow system-socket (socket-domain \"AF_UNIX\"))",
		"does not take");
}

/* Broken text must give an error, never a crash or a half-read profile:
 * every prefix of a profile, and the profile with single bytes replaced by
 * the characters that matter to the reader. */
Test(sbpl_parse, truncated_and_corrupted_text_is_refused_cleanly)
{
	static const char text[] =
		"; header\n(version 1)\n(deny default)\n"
		"(allow file-read* file-write-data (with report)\n"
		"  (subpath \"/Users/alice/src\") ; comment\n"
		"  (regex #\"^/private/tmp/[^/]*\\.(log|txt)$\")\n"
		"  (literal (string-append (param \"HOME\") \"/q\\\"t\\\\s\")))\n"
		"(deny file-write* (require-all (subpath \"/a\") (require-not (literal \"/a/b\"))))\n"
		"(allow network-outbound (remote tcp (string-append \"localhost:\" (param \"P\"))))\n"
		"(allow mach-lookup (global-name \"com.apple.trustd.agent\"))\n";
	struct sbpl_eval_param ps[] = { { "HOME", "/Users/alice" }, { "P", "8080" } };
	size_t n = sizeof(text) - 1;
	char buf[sizeof(text)];
	struct sbpl_eval_profile *p = sbpl_eval_parse(text, n, ps, 2, err, sizeof(err));
	cr_assert(p, "%s", err);
	cr_assert_eq(sbpl_eval_rule_count(p), 5);
	sbpl_eval_free(p);
	size_t ok = 0;
	for (size_t len = 0; len < n; len++) {
		err[0] = '\0';
		p = sbpl_eval_parse(text, len, ps, 2, err, sizeof(err));
		if (p) {
			ok++;
			sbpl_eval_free(p);
		} else {
			cr_assert(err[0] != '\0', "no message for prefix %zu", len);
		}
	}
	/* Only prefixes that end between whole forms (after the default rule)
	 * can load. */
	cr_assert_leq(ok, 16);
	static const char subst[] = "()\"\\;# \n*x0";
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < sizeof(subst) - 1; k++) {
			memcpy(buf, text, n);
			buf[i] = subst[k];
			err[0] = '\0';
			p = sbpl_eval_parse(buf, n, ps, 2, err, sizeof(err));
			if (p)
				sbpl_eval_free(p);
			else
				cr_assert(err[0] != '\0');
		}
}
