/*
 * test_sbx_log.c - reading Seatbelt's reports (runtime/seatbelt/sbx_log.c),
 * the run tag in the profile (sbpl_emit_tagged), and the nested-sandbox
 * message (sbx_nest.c).
 *
 * The report lines below are written out here in the exact form public
 * bug reports quote them; each cites where that form was seen. Lines
 * marked "constructed" follow a form we could not find quoted verbatim
 * (the ndjson wrapper, the tag at the end, allow-with-report); their
 * assumptions are listed in docs/cagerun.md ("Seatbelt's reports").
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cage.h"
#include "ir.h"
#include "mon_record.h"
#include "mon_summary.h"
#include "policy.h"
#include "sbpl.h"
#include "sbpl_eval.h"
#include "sbx_log.h"
#include "sbx_nest.h"

static struct sbx_report parse(const char *line, const char *tag)
{
	struct sbx_report r;
	cr_assert(sbx_log_parse_text(line, strlen(line), tag, &r), "not parsed: %s", line);
	return r;
}

/* `log stream --level Error` output quoted in
 * https://github.com/NixOS/nixpkgs/issues/345333 */
Test(sbx_log, kernel_line_with_path)
{
	struct sbx_report r = parse("   Error 0x0 0 0 kernel: (Sandbox) Sandbox: ollama-sandbox(4615) "
				    "deny(1) file-read-data /System/Volumes/Preboot/Cryptexes/OS",
				    NULL);
	cr_expect_str_eq(r.process, "ollama-sandbox");
	cr_expect_eq(r.pid, 4615);
	cr_expect(r.deny);
	cr_expect_not(r.system_policy);
	cr_expect_eq(r.count, 1);
	cr_expect_str_eq(r.op, "file-read-data");
	cr_expect_str_eq(r.target, "/System/Volumes/Preboot/Cryptexes/OS");
	cr_expect_not(r.tagged);
}

/* Same source: the kernel folds repeats into a "duplicate report" line. */
Test(sbx_log, duplicate_report)
{
	struct sbx_report r = parse("   Error 0x0 0 0 kernel: (Sandbox) 1 duplicate report for "
				    "Sandbox: ollama-sandbox(4615) deny(1) mach-lookup "
				    "com.apple.diagnosticd",
				    NULL);
	cr_expect_eq(r.count, 2);
	cr_expect_str_eq(r.op, "mach-lookup");
	cr_expect_str_eq(r.target, "com.apple.diagnosticd");
}

/* https://github.com/anthropics/claude-code/issues/40209 (1Password CLI) */
Test(sbx_log, mach_lookup_of_a_team_service)
{
	struct sbx_report r = parse("kernel: (Sandbox) Sandbox: op(43886) deny(1) mach-lookup "
				    "2BUA8C4S2C.com.1password.browser-helper",
				    NULL);
	cr_expect_str_eq(r.process, "op");
	cr_expect_eq(r.pid, 43886);
	cr_expect_str_eq(r.target, "2BUA8C4S2C.com.1password.browser-helper");
}

/* https://github.com/hishamhm/htop/issues/449: the platform policy, and an
 * operation without a target. */
Test(sbx_log, system_policy_without_target)
{
	struct sbx_report r = parse("Apr  1 22:14:08 havorn kernel[0] <Notice>: Sandbox: htop(12748) "
				    "System Policy: deny(1) mach-priv-task-port",
				    NULL);
	cr_expect_str_eq(r.process, "htop");
	cr_expect(r.system_policy);
	cr_expect_str_eq(r.op, "mach-priv-task-port");
	cr_expect_str_eq(r.target, "");
}

/* https://github.com/anthropic-experimental/sandbox-runtime/issues/67: what
 * a nested sandbox-exec leaves in the log. */
Test(sbx_log, forbidden_sandbox_reinit)
{
	struct sbx_report r = parse("(Sandbox) Sandbox: sandbox-exec(27256) deny(1) "
				    "forbidden-sandbox-reinit",
				    NULL);
	cr_expect_str_eq(r.process, "sandbox-exec");
	cr_expect_str_eq(r.op, "forbidden-sandbox-reinit");
}

/* https://github.com/jacksight/xina520_official_jailbreak/issues/19: a
 * target with colons. */
Test(sbx_log, target_with_colons)
{
	struct sbx_report r =
		parse("Sandbox: backboardd(4079) deny(1) mach-lookup lh:rbs:rockettest_messageport", NULL);
	cr_expect_str_eq(r.target, "lh:rbs:rockettest_messageport");
}

/* Constructed: a process name with spaces and parentheses (macOS app
 * helpers), a path with spaces, and this run's tag at the end. */
Test(sbx_log, tag_is_taken_off_the_target)
{
	const char *tag = "cage-0123456789abcdef";
	struct sbx_report r = parse("Sandbox: Code Helper (Plugin)(812) deny(1) file-read-data "
				    "/Users/alice/My Secrets/id_rsa cage-0123456789abcdef",
				    tag);
	cr_expect_str_eq(r.process, "Code Helper (Plugin)");
	cr_expect_eq(r.pid, 812);
	cr_expect(r.tagged);
	cr_expect_str_eq(r.target, "/Users/alice/My Secrets/id_rsa");
	r = parse("Sandbox: sh(1) deny(1) file-read-data /x cage-0123456789abcdeX", tag);
	cr_expect_not(r.tagged, "another run's tag is not ours");
	r = parse("Sandbox: sh(1) deny(1) network-outbound cage-0123456789abcdef", tag);
	cr_expect(r.tagged);
	cr_expect_str_eq(r.target, "");
}

/* Constructed: monitor mode's allow-with-report line. */
Test(sbx_log, allow_with_report)
{
	struct sbx_report r = parse("Sandbox: python3(501) allow(1) file-write-create /private/tmp/x",
				    NULL);
	cr_expect_not(r.deny);
	cr_expect_str_eq(r.op, "file-write-create");
	r = parse("Sandbox: python3(501) allow file-read-data /etc/hosts", NULL);
	cr_expect_not(r.deny);
	cr_expect_str_eq(r.target, "/etc/hosts");
}

Test(sbx_log, not_reports)
{
	struct sbx_report r;
	const char *bad[] = { "", "Sandbox:", "Sandbox: x deny(1) op", "Sandbox: x(12) maybe(1) op",
			      "Sandbox: x(12) deny(1)", "Sandbox: (12) deny(1) op /p",
			      "sandbox-exec: sandbox_apply: Operation not permitted" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		cr_expect_not(sbx_log_parse_text(bad[i], strlen(bad[i]), NULL, &r), "parsed: %s",
			      bad[i]);
}

/* Constructed: one `log stream --style ndjson` line (field names of
 * log(1)'s JSON styles; other fields abridged), with JSON escapes. */
static const char ndjson[] =
	"{\"traceID\":1,\"eventMessage\":\"Sandbox: cat(901) deny(1) file-read-data "
	"\\/Users\\/alice\\/.ssh\\/id_rsa cage-00000000000000aa\",\"eventType\":\"logEvent\","
	"\"processImagePath\":\"\\/kernel\",\"senderImagePath\":\"\\/System\\/Library\\/Extensions\\/"
	"Sandbox.kext\\/Contents\\/MacOS\\/Sandbox\",\"processID\":0}\n";

Test(sbx_log, ndjson_line)
{
	struct sbx_report r;
	cr_assert(sbx_log_parse_ndjson(ndjson, sizeof ndjson - 1, "cage-00000000000000aa", &r));
	cr_expect_str_eq(r.process, "cat");
	cr_expect_str_eq(r.target, "/Users/alice/.ssh/id_rsa");
	cr_expect(r.tagged);
	const char *nomsg = "{\"eventType\":\"logEvent\"}";
	cr_expect_not(sbx_log_parse_ndjson(nomsg, strlen(nomsg), NULL, &r));
}

Test(sbx_log, records_of_this_run_only)
{
	char *text = NULL;
	size_t len = 0;
	FILE *in = open_memstream(&text, &len);
	cr_assert(in);
	for (int i = 0; i < 3; i++)
		fputs(ndjson, in);
	fputs("{\"eventMessage\":\"Sandbox: cat(901) deny(1) mach-lookup com.apple.x "
	      "cage-00000000000000bb\"}\n", in); /* another run */
	fputs("{\"eventMessage\":\"1 duplicate report for Sandbox: git(7) deny(1) "
	      "file-write-create \\/Users\\/alice\\/src\\/.git\\/hooks\\/x cage-00000000000000aa\"}\n",
	      in);
	fputs("{\"eventMessage\":\"Sandbox: security(8) deny(1) mach-lookup "
	      "com.apple.SecurityServer cage-00000000000000aa\"}\n", in);
	fputs("{\"eventMessage\":\"Sandbox: curl(9) deny(1) network-outbound 1.2.3.4:443 "
	      "cage-00000000000000aa\"}\n", in);
	fputs("{\"eventMessage\":\"Sandbox: sh(10) deny(1) sysctl-read kern.bootargs "
	      "cage-00000000000000aa\"}\n", in);
	fputs("not json at all\n", in);
	fclose(in);
	FILE *f = fmemopen(text, len, "r");
	cr_assert(f);
	char logpath[] = "/tmp/sbxlog.XXXXXX";
	int fd = mkstemp(logpath);
	cr_assert(fd >= 0);
	struct mon_summary s;
	mon_summary_init(&s, 64, true);
	unsigned long other = 0;
	unsigned long n = sbx_log_collect(f, "cage-00000000000000aa", &s, fd, &other);
	fclose(f);
	cr_expect_eq(n, 8);
	cr_expect_eq(other, 1, "sysctl-read has no record");
	cr_expect_eq(s.total[MON_DENIED], 7);
	/* The records read back as the Linux monitor's. */
	FILE *lf = fdopen(fd, "r");
	cr_assert(lf);
	rewind(lf);
	char *line = NULL;
	size_t cap = 0;
	int k = 0;
	bool saw_read = false, saw_create = false, saw_mach = false, saw_connect = false;
	while (getline(&line, &cap, lf) > 0) {
		struct mon_record r;
		cr_assert(mon_record_parse(line, &r), "not a record: %s", line);
		k++;
		cr_expect_eq(r.verdict, MON_DENIED);
		if (r.access == IR_A_READ && r.path && !strcmp(r.path, "/Users/alice/.ssh/id_rsa") &&
		    !strcmp(r.exe, "cat") && r.pid == 901)
			saw_read = true;
		if (r.access == IR_A_CREATE && r.count == 2)
			saw_create = true;
		if (r.access == IR_A_MACH && r.host && !strcmp(r.host, "com.apple.SecurityServer"))
			saw_mach = true;
		if (r.access == IR_A_CONNECT && r.host && !strcmp(r.host, "1.2.3.4") && r.port == 443)
			saw_connect = true;
	}
	free(line);
	fclose(lf);
	unlink(logpath);
	cr_expect_eq(k, 6);
	cr_expect(saw_read && saw_create && saw_mach && saw_connect);
	mon_summary_free(&s);
	free(text);
}

Test(sbx_log, record_mapping)
{
	struct mon_record m;
	struct sbx_report r = parse("Sandbox: x(1) deny(1) file-write-unlink /a/b", NULL);
	cr_assert(sbx_report_record(&r, 5, &m));
	cr_expect_eq(m.access, IR_A_DELETE);
	cr_expect_eq(m.time_ms, 5);
	r = parse("Sandbox: x(1) deny(1) file-read-metadata /a", NULL);
	cr_assert(sbx_report_record(&r, 0, &m));
	cr_expect_eq(m.access, IR_A_READ_META);
	r = parse("Sandbox: x(1) deny(1) process-exec* /bin/ls", NULL);
	cr_assert(sbx_report_record(&r, 0, &m));
	cr_expect_eq(m.access, IR_A_EXEC);
	r = parse("Sandbox: x(1) deny(1) network-outbound /private/var/run/docker.sock", NULL);
	cr_assert(sbx_report_record(&r, 0, &m));
	cr_expect_eq(m.access, IR_A_UNIX);
	r = parse("Sandbox: x(1) allow(1) file-write-data /a", NULL);
	cr_assert(sbx_report_record(&r, 0, &m));
	cr_expect_eq(m.verdict, MON_WOULD_BLOCK);
	r = parse("Sandbox: x(1) deny(1) forbidden-sandbox-reinit", NULL);
	cr_expect_not(sbx_report_record(&r, 0, &m));
}

Test(sbx_nest, message_path)
{
	char err[512] = "";
	cr_expect_not(sbx_nested_refusal(0, err, sizeof err));
	cr_expect_not(sbx_nested_refusal(-1, err, sizeof err));
	cr_expect(sbx_nested_refusal(1, err, sizeof err));
	cr_expect(strstr(err, "already running inside a Seatbelt sandbox"), "%s", err);
	cr_expect(strstr(err, "nothing was run"), "%s", err);
#ifndef __APPLE__
	cr_expect_eq(sbx_in_sandbox(), -1, "the probe is macOS only");
#endif
}

/* The run tag: on every deny rule (and the default), on every report in
 * monitor mode, and the tagged profile means what the untagged one means. */
static char *emit(const char *src, const char *tag, const char **err)
{
	cage_options *o = cage_options_new();
	cage_options_target(o, "macos");
	cage_options_home(o, "/Users/alice");
	cage_policy *p = cage_load_string("t.cage", src, strlen(src), o);
	cr_assert(p && cage_error_count(p) == 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	bool ok = sbpl_emit_tagged(p->ir, p->ir->selected, tag, f, &p->arena, err);
	fclose(f);
	cage_policy_free(p);
	cage_options_free(o);
	if (!ok) {
		free(buf);
		return NULL;
	}
	return buf;
}

static const char tag_policy[] =
	"cage 1\nprotect read \"/Users/alice/.ssh/**\"\nprofile main {\n"
	"  allow read write \"/Users/alice/src/**\"\n  deny write \"/Users/alice/src/.git/**\"\n"
	"  allow connect \"example.com:443\"\n}\n";

Test(sbx_tag, every_deny_carries_the_tag)
{
	const char *err = NULL;
	char *t = emit(tag_policy, "cage-00ff", &err);
	cr_assert(t, "%s", err);
	cr_expect(strstr(t, "(deny default (with message \"cage-00ff\"))"));
	size_t denies = 0;
	for (const char *p = t; (p = strstr(p, "\n(deny ")); p++) {
		denies++;
		const char *eol = strchr(p + 1, '\n');
		cr_expect(eol && memmem(p, (size_t)(eol - p), "(with message \"cage-00ff\")", 26),
			  "untagged deny: %.80s", p + 1);
	}
	cr_expect_geq(denies, 4);
	/* The evaluator reads it and decides as for the untagged profile. */
	char *u = emit(tag_policy, NULL, &err);
	cr_assert(u);
	cr_expect_null(strstr(u, "with message"));
	struct sbpl_eval_param ps[] = { { "PROXY_PORT", "3128" } };
	char e1[256], e2[256];
	struct sbpl_eval_profile *pt = sbpl_eval_parse(t, strlen(t), ps, 1, e1, sizeof e1);
	struct sbpl_eval_profile *pu = sbpl_eval_parse(u, strlen(u), ps, 1, e2, sizeof e2);
	cr_assert(pt, "%s", e1);
	cr_assert(pu, "%s", e2);
	const char *paths[] = { "/Users/alice/.ssh/id_rsa", "/Users/alice/src/a.c",
				"/Users/alice/src/.git/config", "/etc/passwd" };
	const char *ops[] = { "file-read-data", "file-write-data" };
	for (size_t i = 0; i < 4; i++)
		for (size_t k = 0; k < 2; k++) {
			struct sbpl_eval_result a, b;
			cr_assert(sbpl_eval_decide_path(pt, ops[k], paths[i], &a, e1, sizeof e1), "%s",
				  e1);
			cr_assert(sbpl_eval_decide_path(pu, ops[k], paths[i], &b, e2, sizeof e2), "%s",
				  e2);
			cr_expect_eq(a.allowed, b.allowed, "%s %s", ops[k], paths[i]);
		}
	sbpl_eval_free(pt);
	sbpl_eval_free(pu);
	free(t);
	free(u);
	cr_expect_null(emit(tag_policy, "Cage\"x", &err));
	cr_expect(sbpl_tag_ok("cage-0123456789abcdef"));
	cr_expect_not(sbpl_tag_ok(""));
}

/* The tagged monitor profile of an example against its golden file
 * (testsuite/golden/monitor-first.sb, what `cagec --emit sbpl` writes):
 * the same text, with the tag right after every (with report). */
Test(sbx_tag, tagged_monitor_example_is_its_golden_with_the_tag)
{
	static const char tag[] = "cage-0123456789abcdef";
	cr_assert_eq(chdir(CAGE_SOURCE_DIR), 0);
	cage_options *o = cage_options_new();
	cage_options_target(o, "macos");
	cage_options_home(o, "/Users/alice");
	cr_assert(cage_options_define(o, "workspace=/Users/alice/src/app"));
	cage_policy *p = cage_load_file("examples/monitor-first.cage", o);
	cr_assert(p && cage_error_count(p) == 0);
	cr_assert_eq(p->ir->selected->mode, IR_MODE_MONITOR);
	char *got = NULL;
	size_t got_len = 0;
	FILE *f = open_memstream(&got, &got_len);
	const char *err = NULL;
	cr_assert(sbpl_emit_tagged(p->ir, p->ir->selected, tag, f, &p->arena, &err), "%s", err);
	fclose(f);
	cage_policy_free(p);
	cage_options_free(o);

	FILE *g = fopen("testsuite/golden/monitor-first.sb", "r");
	cr_assert(g);
	char *want = NULL;
	size_t want_len = 0;
	FILE *w = open_memstream(&want, &want_len);
	static const char rep[] = "(with report)";
	char line[4096];
	size_t reports = 0;
	while (fgets(line, sizeof line, g)) {
		for (char *q = line, *hit; *q; q = hit + sizeof rep - 1) {
			hit = strstr(q, rep);
			if (!hit) {
				fputs(q, w);
				break;
			}
			fwrite(q, 1, (size_t)(hit - q), w);
			fprintf(w, "%s (with message \"%s\")", rep, tag);
			reports++;
		}
	}
	fclose(g);
	fclose(w);
	cr_expect_geq(reports, 2, "the golden is a monitor profile with reports");
	cr_expect_str_eq(got, want);
	/* And the evaluator takes it: every report carries the tag. */
	struct sbpl_eval_param ps[] = { { "PROXY_PORT", "3128" },
					{ "PRIVATE_TMP", "/private/var/folders/q/T/cage" } };
	char e1[256];
	struct sbpl_eval_profile *ev = sbpl_eval_parse(got, got_len, ps, 2, e1, sizeof e1);
	cr_assert(ev, "%s", e1);
	struct sbpl_eval_result r;
	cr_assert(sbpl_eval_decide_path(ev, "file-read-data", "/Users/alice/.ssh/id_ed25519", &r, e1,
					sizeof e1),
		  "%s", e1);
	cr_expect(r.allowed && r.report, "monitor: the secret's read is allowed and reported");
	cr_expect(r.message && strcmp(r.message, tag) == 0, "with the tag");
	sbpl_eval_free(ev);
	free(got);
	free(want);
}

/* Monitor mode: what enforce would deny is allowed and reported, and each
 * of those reports carries the tag, or cagerun's log reader (which keeps
 * only lines ending in the tag) would collect nothing. Judged by the
 * evaluator against the enforce profile: for every query, enforce denies
 * exactly when monitor allows with a report tagged with the run's tag. */
Test(sbx_tag, monitor_reports_carry_the_tag)
{
	static const char mon_policy[] =
		"cage 1\nprotect read \"/Users/alice/.ssh/**\"\nprofile main {\n  mode monitor\n"
		"  allow read write \"/Users/alice/src/**\"\n  deny write \"/Users/alice/src/.git/**\"\n"
		"  deny read \"/Users/alice/src/.env\"\n  allow connect \"example.com:443\"\n}\n";
	const char *err = NULL;
	char *t = emit(mon_policy, "cage-00ff", &err);
	cr_assert(t, "%s", err);
	cr_expect_null(strstr(t, "\n(deny "), "monitor mode must not deny anything");
	cr_expect(strstr(t, "(allow default (with report) (with message \"cage-00ff\"))\n"));
	size_t reports = 0;
	for (const char *p = t; (p = strstr(p, "(with report)")); p++) {
		reports++;
		cr_expect_eq(strncmp(p, "(with report) (with message \"cage-00ff\")", 40), 0,
			     "untagged report: %.80s", p);
	}
	cr_expect_geq(reports, 4);
	/* Untagged, the profile is what `cagec --emit sbpl` writes. */
	char *u = emit(mon_policy, NULL, &err);
	cr_assert(u, "%s", err);
	cr_expect_null(strstr(u, "with message"));
	/* The same policy in enforce mode, untagged. */
	static const char enf_policy_head[] = "cage 1\nprotect read \"/Users/alice/.ssh/**\"\n"
					      "profile main {\n";
	const char *body = strstr(mon_policy, "  allow read write");
	cr_assert(body);
	size_t hn = strlen(enf_policy_head), bn = strlen(body);
	char *enf_src = malloc(hn + bn + 1);
	cr_assert(enf_src);
	memcpy(enf_src, enf_policy_head, hn);
	memcpy(enf_src + hn, body, bn + 1);
	char *e = emit(enf_src, NULL, &err);
	cr_assert(e, "%s", err);
	struct sbpl_eval_param ps[] = { { "PROXY_PORT", "3128" } };
	char e1[256], e2[256];
	struct sbpl_eval_profile *pm = sbpl_eval_parse(t, strlen(t), ps, 1, e1, sizeof e1);
	struct sbpl_eval_profile *pe = sbpl_eval_parse(e, strlen(e), ps, 1, e2, sizeof e2);
	cr_assert(pm, "%s", e1);
	cr_assert(pe, "%s", e2);
	const char *paths[] = { "/Users/alice/.ssh/id_rsa", "/Users/alice/src/a.c",
				"/Users/alice/src/.git/config", "/Users/alice/src/.env",
				"/etc/passwd", "/Users/alice/Documents/x" };
	const char *ops[] = { "file-read-data", "file-write-data" };
	size_t denied = 0, allowed = 0;
	for (size_t i = 0; i < sizeof paths / sizeof *paths; i++)
		for (size_t k = 0; k < 2; k++) {
			struct sbpl_eval_result m, n;
			cr_assert(sbpl_eval_decide_path(pm, ops[k], paths[i], &m, e1, sizeof e1), "%s",
				  e1);
			cr_assert(sbpl_eval_decide_path(pe, ops[k], paths[i], &n, e2, sizeof e2), "%s",
				  e2);
			cr_expect(m.allowed, "monitor allows %s %s", ops[k], paths[i]);
			cr_expect_eq(m.report, !n.allowed, "%s %s: reported iff enforce denies", ops[k],
				     paths[i]);
			if (!n.allowed) {
				denied++;
				cr_expect(m.message && strcmp(m.message, "cage-00ff") == 0,
					  "%s %s: the report carries the tag (line %u)", ops[k], paths[i],
					  m.line);
			} else {
				allowed++;
			}
		}
	/* Both kinds of answer occur, so the comparison means something. */
	cr_expect_geq(denied, 4);
	cr_expect_geq(allowed, 2);
	sbpl_eval_free(pm);
	sbpl_eval_free(pe);
	free(enf_src);
	free(e);
	free(u);
	free(t);
}
