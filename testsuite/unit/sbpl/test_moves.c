/*
 * test_moves.c - the attacks on what runs code outside the cage, replayed
 * against every shipped example on both sides: the IR evaluator (what
 * `cagec explain` answers, ir_eval_path / ir_eval_move) and the emitted
 * Seatbelt profile read back by the SBPL evaluator.
 *
 * Each attack is first shown to succeed on both sides under a control
 * policy that grants the workspace without std/guard (a failing control
 * fails the test), then shown to be refused under each example. Ordinary
 * git work must stay allowed under each example.
 *
 * How Seatbelt checks a move (docs/sbpl.md, "Access bits to operations"):
 * rename(S, D) needs file-write-unlink on S and file-write-create on D;
 * link(S, D) needs file-link on S and file-write-create on D. The pins
 * deny file-write-unlink and file-link on what they hold; the emitter
 * writes no rule that would let a move pass with only one of the two.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cage.h"
#include "policy.h"
#include "sbpl_eval.h"

#define HOME "/Users/alice"
#define WS HOME "/src/app"

struct side {
	cage_policy *pol;
	const struct ir_profile *prof;
	char *sbpl;
	size_t len;
	struct sbpl_eval_profile *sp;
};

static void load(struct side *s, const char *file, const char *src)
{
	memset(s, 0, sizeof *s);
	cage_options *o = cage_options_new();
	cr_assert(o);
	cage_options_target(o, "macos");
	cage_options_home(o, HOME);
	cage_options_stdlib(o, CAGE_SOURCE_DIR "/stdlib");
	cr_assert(cage_options_define(o, "workspace=" WS));
	s->pol = file ? cage_load_file(file, o) : cage_load_string("ctl.cage", src, strlen(src), o);
	cage_options_free(o);
	cr_assert(s->pol);
	if (cage_error_count(s->pol) != 0) {
		cage_print_diagnostics(s->pol, stderr, false);
		cr_assert_fail("%s does not compile", file ? file : "control");
	}
	s->prof = s->pol->ir->selected;
	FILE *f = open_memstream(&s->sbpl, &s->len);
	cr_assert(f);
	const char *err = NULL;
	cr_assert(cage_emit(s->pol, "sbpl", f, &err), "%s", err ? err : "?");
	cr_assert_eq(fclose(f), 0);
	struct sbpl_eval_param params[] = {
		{ "PROXY_PORT", "47113" },
		{ "PRIVATE_TMP", "/private/var/folders/cg/T/cage-tmp" },
		{ "PRIVATE_HOME", "/private/var/folders/cg/T/cage-home" },
	};
	char perr[512];
	s->sp = sbpl_eval_parse(s->sbpl, s->len, params, 3, perr, sizeof perr);
	cr_assert(s->sp, "emitted SBPL does not load: %s", perr);
}

static void release(struct side *s)
{
	sbpl_eval_free(s->sp);
	free(s->sbpl);
	cage_policy_free(s->pol);
}

/* Allowed by the profile: not denied, and (monitor mode) not reported. */
static bool sb(const struct side *s, const char *op, const char *path)
{
	struct sbpl_eval_result r;
	char err[256];
	cr_assert(sbpl_eval_decide_path(s->sp, op, path, &r, err, sizeof err), "%s", err);
	return r.allowed && !r.report;
}

static bool ir_path(const struct side *s, uint32_t bit, const char *path)
{
	struct ir_verdict v;
	ir_eval_path(s->prof, bit, path, &v);
	return v.allowed;
}

static bool ir_move(const struct side *s, enum ir_move_kind k, const char *src, const char *dst)
{
	struct ir_move_verdict v;
	ir_eval_move(s->prof, k, src, dst, &v);
	return v.allowed;
}

/* One attack: `name` succeeds on a side when every step is allowed. */
enum step_kind { WRITE, CREATE, RENAME, LINK };
struct attack {
	const char *name;
	enum step_kind kind;
	const char *a, *b;
};

static const struct attack attacks[] = {
	{ "rename .git away (then a fresh .git/hooks)", RENAME, WS "/.git", WS "/.git-old" },
	{ "rename the hooks folder away", RENAME, WS "/.git/hooks", WS "/.git/hooks-old" },
	{ "write a hook", WRITE, WS "/.git/hooks/pre-commit", NULL },
	{ "create a hook", CREATE, WS "/.git/hooks/post-checkout", NULL },
	{ "replace .git/config by rename", RENAME, WS "/config.new", WS "/.git/config" },
	{ "write .git/config (core.hooksPath)", WRITE, WS "/.git/config", NULL },
	{ "write a submodule's hook", CREATE, WS "/.git/modules/lib/hooks/pre-commit", NULL },
	{ "rename a submodule's repository away", RENAME, WS "/.git/modules/lib", WS "/lib-old" },
	{ "write .envrc", CREATE, WS "/.envrc", NULL },
	{ "create .vscode", CREATE, WS "/.vscode", NULL },
	{ "add .vscode/tasks.json", CREATE, WS "/.vscode/tasks.json", NULL },
	{ "add .claude/settings.json", CREATE, WS "/.claude/settings.json", NULL },
	{ "rename .claude away", RENAME, WS "/.claude", WS "/claude-old" },
	{ "add .mcp.json", CREATE, WS "/.mcp.json", NULL },
	{ "link a protected key to a readable name", LINK, HOME "/.ssh/id_rsa", WS "/id" },
};
enum { N_ATTACKS = sizeof attacks / sizeof attacks[0] };

static bool ir_succeeds(const struct side *s, const struct attack *t)
{
	switch (t->kind) {
	case WRITE: return ir_path(s, IR_A_WRITE, t->a);
	case CREATE: return ir_path(s, IR_A_CREATE, t->a);
	case RENAME: return ir_move(s, IR_MOVE_RENAME, t->a, t->b);
	case LINK: return ir_move(s, IR_MOVE_LINK, t->a, t->b);
	}
	return true;
}

static bool sbpl_succeeds(const struct side *s, const struct attack *t)
{
	switch (t->kind) {
	case WRITE: return sb(s, "file-write-data", t->a);
	case CREATE: return sb(s, "file-write-create", t->a);
	case RENAME: return sb(s, "file-write-unlink", t->a) && sb(s, "file-write-create", t->b);
	case LINK: return sb(s, "file-link", t->a) && sb(s, "file-write-create", t->b);
	}
	return true;
}

/* The control: the workspace and home's .ssh granted, no std/guard. */
static const char control[] = "cage 1\nparam workspace : path\nprofile p {\n"
			      "    allow read write exec workspace\n"
			      "    allow read write exec \"~/.ssh/**\"\n}\n";

Test(moves, attacks_succeed_without_the_guard)
{
	struct side s;
	load(&s, NULL, control);
	for (size_t i = 0; i < N_ATTACKS; i++) {
		cr_expect(ir_succeeds(&s, &attacks[i]), "control, IR: %s", attacks[i].name);
		cr_expect(sbpl_succeeds(&s, &attacks[i]), "control, SBPL: %s", attacks[i].name);
	}
	release(&s);
}

/* Ordinary git work: status, add, commit, branch, log; init and clone
 * into a new folder (whose .git/hooks gets git's sample hooks). */
static const char *const git_writes[] = {
	WS "/.git/index", WS "/.git/index.lock", WS "/.git/objects/ab/cdef0123",
	WS "/.git/objects/pack/pack-1.pack", WS "/.git/refs/heads/main",
	WS "/.git/refs/heads/main.lock", WS "/.git/refs/heads/topic", WS "/.git/logs/HEAD",
	WS "/.git/logs/refs/heads/topic", WS "/.git/HEAD", WS "/.git/HEAD.lock",
	WS "/.git/ORIG_HEAD", WS "/.git/COMMIT_EDITMSG", WS "/src/main.c",
	WS "/new/.git/config", WS "/new/.git/HEAD", WS "/clone/.git/hooks/pre-commit.sample",
	WS "/clone/.git/config", WS "/clone/.git/objects/pack/tmp_pack_x",
};
/* lock file renamed over its target, as git commits every change */
static const char *const git_renames[][2] = {
	{ WS "/.git/index.lock", WS "/.git/index" },
	{ WS "/.git/refs/heads/main.lock", WS "/.git/refs/heads/main" },
	{ WS "/.git/HEAD.lock", WS "/.git/HEAD" },
	{ WS "/.git/objects/ab/tmp_obj_x", WS "/.git/objects/ab/cdef0123" },
	{ WS "/clone/.git/config.lock", WS "/clone/.git/config" },
};

static void check_example(const char *name)
{
	char file[1024];
	snprintf(file, sizeof file, "%s/examples/%s.cage", CAGE_SOURCE_DIR, name);
	struct side s;
	load(&s, file, NULL);
	for (size_t i = 0; i < N_ATTACKS; i++) {
		cr_expect(!ir_succeeds(&s, &attacks[i]), "%s, IR allows: %s", name, attacks[i].name);
		cr_expect(!sbpl_succeeds(&s, &attacks[i]), "%s, SBPL allows: %s", name,
			  attacks[i].name);
	}
	for (size_t i = 0; i < sizeof git_writes / sizeof git_writes[0]; i++) {
		const char *p = git_writes[i];
		cr_expect(ir_path(&s, IR_A_CREATE, p) && ir_path(&s, IR_A_WRITE, p) &&
				  ir_path(&s, IR_A_DELETE, p) && ir_path(&s, IR_A_READ, p),
			  "%s, IR refuses git work on %s", name, p);
		cr_expect(sb(&s, "file-write-create", p) && sb(&s, "file-write-data", p) &&
				  sb(&s, "file-write-unlink", p) && sb(&s, "file-read-data", p),
			  "%s, SBPL refuses git work on %s", name, p);
	}
	for (size_t i = 0; i < sizeof git_renames / sizeof git_renames[0]; i++) {
		const struct attack t = { "git rename", RENAME, git_renames[i][0], git_renames[i][1] };
		cr_expect(ir_succeeds(&s, &t), "%s, IR refuses mv %s %s", name, t.a, t.b);
		cr_expect(sbpl_succeeds(&s, &t), "%s, SBPL refuses mv %s %s", name, t.a, t.b);
	}
	/* reading what the guard keeps stays allowed */
	cr_expect(ir_path(&s, IR_A_READ, WS "/.git/config") && sb(&s, "file-read-data", WS "/.git/config"),
		  "%s: .git/config must stay readable", name);
	release(&s);
}

Test(moves, example_claude_code) { check_example("claude-code"); }
Test(moves, example_codex) { check_example("codex"); }
Test(moves, example_gemini) { check_example("gemini"); }
Test(moves, example_go_offline) { check_example("go-offline"); }
Test(moves, example_layered) { check_example("layered"); }
Test(moves, example_monitor_first) { check_example("monitor-first"); }

/* The example: a denied file must not gain read by moving. */
static const char secret[] = "cage 1\nparam workspace : path\nprofile p {\n"
			     "    allow read write workspace\n"
			     "    deny read \"{workspace}/secret/**\"\n}\n";

Test(moves, denied_file_cannot_move_or_link_to_a_readable_name)
{
	struct side s;
	load(&s, NULL, secret);
	const struct attack mv = { "mv secret/k k", RENAME, WS "/secret/k", WS "/k" };
	const struct attack ln = { "ln secret/k k", LINK, WS "/secret/k", WS "/k" };
	const struct attack mvdir = { "mv secret s2", RENAME, WS "/secret", WS "/s2" };
	/* the single steps the rule refuses, as explain answers them */
	cr_expect(!ir_path(&s, IR_A_DELETE, WS "/secret/k"), "delete secret/k");
	cr_expect(ir_path(&s, IR_A_CREATE, WS "/k"), "create k stays allowed");
	cr_expect(!ir_path(&s, IR_A_READ, WS "/secret/k"));
	const struct attack *all[] = { &mv, &ln, &mvdir };
	for (size_t i = 0; i < 3; i++) {
		cr_expect(!ir_succeeds(&s, all[i]), "IR allows %s", all[i]->name);
		cr_expect(!sbpl_succeeds(&s, all[i]), "SBPL allows %s", all[i]->name);
	}
	/* the gain itself, for explain */
	struct ir_move_verdict v;
	ir_eval_move(s.prof, IR_MOVE_RENAME, WS "/secret/k", WS "/k", &v);
	cr_expect(v.gained & IR_A_READ);
	/* moves elsewhere in the workspace stay allowed */
	const struct attack ok = { "mv a b", RENAME, WS "/a", WS "/b" };
	cr_expect(ir_succeeds(&s, &ok) && sbpl_succeeds(&s, &ok));
	release(&s);
}

/* Without the deny, the same moves succeed: the test above is not vacuous. */
Test(moves, moves_succeed_without_the_deny)
{
	struct side s;
	load(&s, NULL, "cage 1\nparam workspace : path\nprofile p {\n"
		       "    allow read write workspace\n}\n");
	const struct attack mv = { "mv secret/k k", RENAME, WS "/secret/k", WS "/k" };
	const struct attack ln = { "ln secret/k k", LINK, WS "/secret/k", WS "/k" };
	cr_expect(ir_succeeds(&s, &mv) && sbpl_succeeds(&s, &mv));
	cr_expect(ir_succeeds(&s, &ln) && sbpl_succeeds(&s, &ln));
	release(&s);
}

/* Landlock's rule on moves between trees the allows alone tell apart: the
 * IR refuses a move that gains exec (Landlock enforces it on Linux;
 * Seatbelt cannot compare two paths, docs/language.md says so). */
Test(moves, destination_may_not_grant_more_than_source)
{
	struct side s;
	load(&s, NULL, "cage 1\nparam workspace : path\nprofile p {\n"
		       "    allow read write workspace\n"
		       "    allow exec \"{workspace}/bin/**\"\n}\n");
	cr_expect(!ir_move(&s, IR_MOVE_RENAME, WS "/src/x", WS "/bin/x"), "gains exec");
	cr_expect(ir_move(&s, IR_MOVE_RENAME, WS "/bin/x", WS "/src/x"), "loses exec: fine");
	release(&s);
}
