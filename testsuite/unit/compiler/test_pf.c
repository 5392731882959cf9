/*
 * test_pf.c - the plan artifact's reader and writer (compiler/format/pf.h):
 * a plan built on a fixture survives write, read and binding to its
 * profile unchanged (nodes, guards, the guard profile's answers), the
 * bytes are deterministic, and malformed input is refused: every
 * truncation, every single flipped byte (the checksum), a bad magic or
 * version, an index past the profile, nodes out of order or a wrong
 * parent even with the checksum fixed up. Dependencies are re-observed:
 * unchanged they agree, a directory created or a symlink swapped in
 * under a recorded path does not.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xxhash.h>

#include "cage.h"
#include "lplan.h"
#include "pf.h"
#include "pf_format.h"
#include "fx_policy.h"
#include "fx_tree.h"
#include "policy.h"

static struct fx_tree fx;

static void setup(void)
{
	fx_make(&fx, "pf");
	fx_mkdirs(&fx, "w");
	fx_mkdirs(&fx, "w/src");
	fx_mkdirs(&fx, "w/.git");
	fx_mkdirs(&fx, "w/.git/hooks");
	fx_file(&fx, "w/.git/hooks/pre-commit", "", 0644);
	fx_mkdirs(&fx, "h");
	fx_mkdirs(&fx, "h/.ssh");
	fx_file(&fx, "h/.ssh/id_rsa", "", 0644);
	/* Older than the planner's window for directories changed just now
	 * (lplan_deps.c, racy), so that the plans built here can be kept. */
	struct timespec settle = { 0, 60 * 1000 * 1000 };
	nanosleep(&settle, NULL);
}

static void teardown(void)
{
	fx_remove(&fx);
}

TestSuite(pf, .init = setup, .fini = teardown);

struct fx {
	cage_policy *pol;
	struct lplan plan;
	uint8_t *bytes;
	size_t len;
};

static const char *body =
	"    allow read exec \"/usr/**\"\n"
	"    allow read write \"{r}/w/**\"\n"
	"    deny write \"{r}/w/.git/hooks/**\"\n"
	"    deny write \"{r}/w/*.lock\"\n"
	"    deny read write \"{r}/w/missing/**\"\n"
	"    allow read \"{r}/h/**\"\n"
	"    deny read write \"{r}/h/.ssh/**\"\n";

static void build(struct fx *f)
{
	f->pol = fx_policy(&fx, body);
	cage_print_diagnostics(f->pol, stderr, false);
	cr_assert_eq(cage_error_count(f->pol), 0);
	const char *err = NULL;
	cr_assert(lplan_build(&f->pol->arena, f->pol->ir->selected, &f->plan, &err));
	cr_assert_eq(f->plan.nerrors, 0);
	struct lplan_widening *w;
	size_t nw;
	lplan_check(&f->pol->arena, &f->plan, &w, &nw, NULL);
	cr_assert_eq(nw, 0);
	struct pf_plan pf;
	lplan_artifact(&f->pol->arena, &f->plan, f->pol->ir, f->pol->ir->selected, 1000, "/cwd",
		       &pf);
	pf_write(&f->pol->arena, &pf, &f->bytes, &f->len);
}

static bool parses(struct fx *f, const uint8_t *b, size_t n, char *err, size_t errlen)
{
	struct pf_plan p;
	return pf_read(&f->pol->arena, b, n, &p, err, errlen);
}

/* The checksum recomputed after an edit, so the structure checks are reached. */
static void reseal(uint8_t *b, size_t n)
{
	pf_wr64(b + n - PF_SUM_SIZE, XXH3_64bits(b, n - PF_SUM_SIZE));
}

Test(pf, round_trip)
{
	struct fx f;
	build(&f);
	struct arena *a = &f.pol->arena;
	struct pf_plan p;
	char err[512] = "";
	cr_assert(pf_read(a, f.bytes, f.len, &p, err, sizeof err), "%s", err);
	cr_assert_eq(p.key.uid, 1000);
	cr_assert_str_eq(p.key.cwd, "/cwd");
	cr_assert_eq(p.key.fingerprint, f.pol->ir->fingerprint);
	cr_assert(p.ndeps > 0);
	/* Stats that an unbroken chain of lstats answers are left out. */
	size_t nrec;
	bool unstable;
	const struct pf_dep *rec = lplan_deps(&f.plan, &nrec, &unstable);
	cr_assert(!unstable);
	cr_assert(p.ndeps < nrec, "%zu of %zu kept", p.ndeps, nrec);
	for (size_t i = 0; i < nrec; i++) {
		bool kept = false;
		for (size_t k = 0; k < p.ndeps && !kept; k++)
			kept = p.deps[k].kind == rec[i].kind && !strcmp(p.deps[k].path, rec[i].path);
		cr_assert(kept || rec[i].kind == PF_DEP_STAT, "%s dropped", rec[i].path);
	}
	struct lplan back;
	cr_assert(lplan_from_pf(a, &p, f.pol->ir->selected, true, &back, err, sizeof err), "%s", err);
	cr_assert_eq(back.nnodes, f.plan.nnodes);
	for (size_t i = 0; i < back.nnodes; i++) {
		const struct lplan_node *x = &f.plan.nodes[i], *y = &back.nodes[i];
		cr_assert_str_eq(x->path, y->path);
		cr_assert(x->exists == y->exists && x->is_dir == y->is_dir && x->created == y->created);
		cr_assert(x->grant == y->grant && x->mount == y->mount && x->ll == y->ll &&
			  x->block == y->block && x->parent == y->parent, "node %s", x->path);
		cr_assert((x->rule == NULL) == (y->rule == NULL));
		if (x->rule)
			cr_assert_eq(x->rule->loc.off, y->rule->loc.off);
	}
	cr_assert_eq(back.nmkdirs, f.plan.nmkdirs);
	cr_assert_eq(back.nguards, f.plan.nguards);
	cr_assert(back.nguards > 0, "the fixture has a guard (the *.lock glob)");
	for (size_t i = 0; i < back.nguards; i++)
		cr_assert_str_eq(back.guards[i].pat.text, f.plan.guards[i].pat.text);
	/* The guard answers the same from the bound plan. */
	char probe[600];
	snprintf(probe, sizeof probe, "%s/w/x.lock", fx.root);
	cr_assert(lplan_guard_denies(&f.plan, probe, LPLAN_MK_FILE, NULL));
	cr_assert(lplan_guard_denies(&back, probe, LPLAN_MK_FILE, NULL));
	snprintf(probe, sizeof probe, "%s/w/x.c", fx.root);
	cr_assert(!lplan_guard_denies(&back, probe, LPLAN_MK_FILE, NULL));
	/* Bound as a launch binds it (without the profile it was built from,
	 * which only the check reads): the same nodes and guard answers. */
	struct lplan lean;
	cr_assert(lplan_from_pf(a, &p, f.pol->ir->selected, false, &lean, err, sizeof err), "%s",
		  err);
	cr_assert(lean.no_rprof && lean.rprof.nrules == 0 && back.rprof.nrules > 0);
	cr_assert_eq(lean.nnodes, back.nnodes);
	cr_assert_eq(lean.gprof.nrules, back.gprof.nrules);
	snprintf(probe, sizeof probe, "%s/w/x.lock", fx.root);
	cr_assert(lplan_guard_denies(&lean, probe, LPLAN_MK_FILE, NULL));
	snprintf(probe, sizeof probe, "%s/w/x.c", fx.root);
	cr_assert(!lplan_guard_denies(&lean, probe, LPLAN_MK_FILE, NULL));
	/* The bound plan passes the same check against the policy. */
	struct lplan_widening *w;
	size_t nw;
	lplan_check(a, &back, &w, &nw, NULL);
	cr_assert_eq(nw, 0);
	/* Written again, the same bytes. */
	struct pf_plan again;
	lplan_artifact(a, &back, f.pol->ir, f.pol->ir->selected, 1000, "/cwd", &again);
	again.deps = p.deps;
	again.ndeps = p.ndeps;
	uint8_t *b2;
	size_t n2;
	pf_write(a, &again, &b2, &n2);
	cr_assert_eq(n2, f.len);
	cr_assert(memcmp(b2, f.bytes, n2) == 0);
	cage_policy_free(f.pol);
}

Test(pf, every_truncation_and_flipped_byte_is_refused)
{
	struct fx f;
	build(&f);
	char err[512];
	for (size_t n = 0; n < f.len; n++)
		cr_assert(!parses(&f, f.bytes, n, err, sizeof err), "accepted %zu of %zu bytes", n,
			  f.len);
	uint8_t *b = malloc(f.len);
	cr_assert(b);
	for (size_t i = 0; i < f.len; i++) {
		memcpy(b, f.bytes, f.len);
		b[i] ^= 0x40;
		cr_assert(!parses(&f, b, f.len, err, sizeof err), "accepted a flip at %zu", i);
	}
	/* Trailing bytes. */
	uint8_t *longer = calloc(1, f.len + 8);
	memcpy(longer, f.bytes, f.len);
	cr_assert(!parses(&f, longer, f.len + 8, err, sizeof err));
	free(longer);
	/* Magic and version, resealed. */
	memcpy(b, f.bytes, f.len);
	b[0] = 'X';
	reseal(b, f.len);
	cr_assert(!parses(&f, b, f.len, err, sizeof err));
	cr_assert(strstr(err, "magic"), "%s", err);
	memcpy(b, f.bytes, f.len);
	pf_wr16(b + PF_H_VERSION, PF_VERSION + 1);
	reseal(b, f.len);
	cr_assert(!parses(&f, b, f.len, err, sizeof err));
	cr_assert(strstr(err, "version"), "%s", err);
	free(b);
	cage_policy_free(f.pol);
}

/* The offset of the first node's rule index: after the header, the key
 * and the rule count, the node count, the path and its fixed fields. */
static size_t first_node(const struct fx *f, const struct pf_plan *p)
{
	size_t off = PF_HDR_SIZE + 8 * 3 + 4;
	off += 4 + strlen(p->key.home) + 4 + strlen(p->key.cwd) + 4 + strlen(p->key.profile);
	off += 4;
	for (size_t i = 0; i < p->key.nparams; i++)
		off += 8 + strlen(p->key.params[i].name) + strlen(p->key.params[i].value);
	off += 4 + 4; /* nrules, nnodes */
	cr_assert(off < f->len);
	return off;
}

Test(pf, bad_indices_and_order_are_refused_even_when_sealed)
{
	struct fx f;
	build(&f);
	struct arena *a = &f.pol->arena;
	struct pf_plan p;
	char err[512];
	cr_assert(pf_read(a, f.bytes, f.len, &p, err, sizeof err));
	cr_assert(p.nnodes >= 2);
	size_t n0 = first_node(&f, &p);
	size_t fields = n0 + 4 + strlen(p.nodes[0].path); /* flags, mount, grant, ll, block, rule */
	size_t rule_off = fields + 1 + 4 + 8 * 3;
	uint8_t *b = malloc(f.len);
	memcpy(b, f.bytes, f.len);
	pf_wr32(b + rule_off, p.nrules + 7);
	reseal(b, f.len);
	cr_assert(!parses(&f, b, f.len, err, sizeof err));
	cr_assert(strstr(err, "rule index"), "%s", err);
	/* A parent that points forward. */
	memcpy(b, f.bytes, f.len);
	pf_wr32(b + rule_off + 4, 1);
	reseal(b, f.len);
	cr_assert(!parses(&f, b, f.len, err, sizeof err));
	/* An unknown node flag. */
	memcpy(b, f.bytes, f.len);
	b[fields] |= 0x80;
	reseal(b, f.len);
	cr_assert(!parses(&f, b, f.len, err, sizeof err));
	free(b);
	/* Parsed but not bindable: nodes swapped out of order, a wrong parent,
	 * a profile of another size. */
	struct pf_plan q = p;
	struct pf_node *nv = arena_alloc(a, p.nnodes * sizeof *nv);
	memcpy(nv, p.nodes, p.nnodes * sizeof *nv);
	struct pf_node t = nv[0];
	nv[0] = nv[1];
	nv[1] = t;
	nv[0].parent = nv[1].parent = PF_NONE;
	q.nodes = nv;
	struct lplan back;
	cr_assert(!lplan_from_pf(a, &q, f.pol->ir->selected, true, &back, err, sizeof err));
	memcpy(nv, p.nodes, p.nnodes * sizeof *nv);
	size_t k = 1;
	while (k < p.nnodes && nv[k].parent == PF_NONE)
		k++;
	cr_assert(k < p.nnodes, "some node has a parent");
	nv[k].parent = PF_NONE;
	cr_assert(!lplan_from_pf(a, &q, f.pol->ir->selected, true, &back, err, sizeof err));
	cr_assert(strstr(err, "parent"), "%s", err);
	/* A path the planner never makes. */
	memcpy(nv, p.nodes, p.nnodes * sizeof *nv);
	const char *odd[] = { "relative", "/a//b", "/a/./b", "/a/../b", "/a/" };
	for (size_t i = 0; i < sizeof odd / sizeof *odd; i++) {
		nv[p.nnodes - 1].path = odd[i];
		cr_assert(!lplan_from_pf(a, &q, f.pol->ir->selected, true, &back, err, sizeof err), "%s",
			  odd[i]);
	}
	q = p;
	q.nrules = p.nrules + 1;
	cr_assert(!lplan_from_pf(a, &q, f.pol->ir->selected, true, &back, err, sizeof err));
	cage_policy_free(f.pol);
}

Test(pf, dependencies_see_a_directory_created_and_a_symlink_swapped)
{
	struct fx f;
	build(&f);
	struct arena *a = &f.pol->arena;
	struct pf_plan p;
	char err[512];
	cr_assert(pf_read(a, f.bytes, f.len, &p, err, sizeof err));
	size_t bad;
	cr_assert(pf_deps_check(a, p.deps, p.ndeps, &bad), "unchanged, yet %s differs",
		  p.deps[bad].path);
	/* A denied directory that was missing comes to exist. */
	fx_mkdirs(&fx, "w/missing");
	cr_assert(!pf_deps_check(a, p.deps, p.ndeps, &bad));
	/* Seen as the missing path itself, or as the listing of its directory. */
	cr_assert(strstr(p.deps[bad].path, "/w"), "%s", p.deps[bad].path);
	char d[600], cmd[2000];
	snprintf(d, sizeof d, "%s/w/missing", fx.root);
	cr_assert(rmdir(d) == 0);
	/* Removed again: the directory the glob listed has new times but the
	 * entries the plan was built from, and the missing path is missing
	 * again: the disk is as recorded, and the plan is the one a fresh
	 * build would make. */
	cr_assert(pf_deps_check(a, p.deps, p.ndeps, &bad), "%s differs", p.deps[bad].path);
	/* A directory above the paths the build only stat'ed becomes a
	 * symlink to a copy of itself: the lstats kept in their place see it. */
	snprintf(cmd, sizeof cmd, "cp -a '%s/w' '%s/w.copy' && mv '%s/w' '%s/w.old' && ln -s '%s/w.copy' '%s/w'",
		 fx.root, fx.root, fx.root, fx.root, fx.root, fx.root);
	cr_assert(system(cmd) == 0);
	cr_assert(!pf_deps_check(a, p.deps, p.ndeps, &bad));
	snprintf(cmd, sizeof cmd, "rm '%s/w' && mv '%s/w.old' '%s/w'", fx.root, fx.root, fx.root);
	cr_assert(system(cmd) == 0);
	/* The home's .ssh becomes a symlink to another directory. */
	fx_mkdirs(&fx, "elsewhere");
	snprintf(cmd, sizeof cmd, "mv '%s/h/.ssh' '%s/ssh.old' && ln -s '%s/elsewhere' '%s/h/.ssh'",
		 fx.root, fx.root, fx.root, fx.root);
	cr_assert(system(cmd) == 0);
	cr_assert(!pf_deps_check(a, p.deps, p.ndeps, &bad));
	cage_policy_free(f.pol);
}

/* The record of the listing of w (the "*.lock" glob lists it). */
static const struct pf_dep *listing_of_w(const struct pf_plan *p)
{
	char w[600];
	snprintf(w, sizeof w, "%s/w", fx.root);
	for (size_t i = 0; i < p->ndeps; i++)
		if (p->deps[i].kind == PF_DEP_LIST && !strcmp(p->deps[i].path, w))
			return &p->deps[i];
	cr_assert_fail("no listing of %s recorded", w);
	return NULL;
}

/* A directory the plan lists, changed just before the build: another
 * change within the same tick of the filesystem's clock could leave its
 * times as recorded, so they are not recorded (all 0) and its entries
 * are compared on every launch. The plan is still kept. */
Test(pf, a_listing_of_a_directory_changed_just_now_is_compared_by_its_entries)
{
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fx_file(&fx, "w/new-entry", "", 0644);
	struct fx f;
	build(&f);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	size_t nrec;
	bool unstable;
	lplan_deps(&f.plan, &nrec, &unstable);
	double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	if (ms > 40)
		cr_skip_test("the build took %.0f ms, past the window this case needs", ms);
	cr_expect(!unstable, "a listing read whole made the plan unstable");
	struct arena *a = &f.pol->arena;
	struct pf_plan p;
	char err[512];
	cr_assert(pf_read(a, f.bytes, f.len, &p, err, sizeof err), "%s", err);
	const struct pf_dep *w = listing_of_w(&p);
	cr_expect(w->listed && !w->mtime_s && !w->mtime_ns && !w->ctime_s && !w->ctime_ns,
		  "times of a directory changed %.1f ms before were recorded", ms);
	size_t bad;
	cr_assert(pf_deps_check(a, p.deps, p.ndeps, &bad), "%s differs", p.deps[bad].path);
	/* Right away, likely within the same tick: its entries tell. */
	fx_file(&fx, "w/one-more", "", 0644);
	cr_assert(!pf_deps_check(a, p.deps, p.ndeps, &bad));
	cr_expect_str_eq(p.deps[bad].path, w->path);
	cage_policy_free(f.pol);
}

/* What git does to .git on every `git status` and `git commit`: a
 * temporary name made and renamed over a file. The listing's times move;
 * its entries do not, and the kept plan still holds. A name the build
 * did not see, or one gone, fails it. */
Test(pf, a_file_saved_through_a_temporary_name_keeps_the_plan)
{
	fx_file(&fx, "w/index", "1", 0644);
	struct timespec wait = { 0, 60000000 }; /* past the 50 ms window */
	nanosleep(&wait, NULL);
	struct fx f;
	build(&f);
	struct arena *a = &f.pol->arena;
	struct pf_plan p;
	char err[512], from[600], to[600];
	cr_assert(pf_read(a, f.bytes, f.len, &p, err, sizeof err), "%s", err);
	const struct pf_dep *w = listing_of_w(&p);
	cr_assert(w->listed && w->ctime_s, "an old listing keeps its times");
	size_t bad;
	cr_assert(pf_deps_check(a, p.deps, p.ndeps, &bad), "%s differs", p.deps[bad].path);
	fx_file(&fx, "w/index.lock", "2", 0644);
	snprintf(from, sizeof from, "%s/w/index.lock", fx.root);
	snprintf(to, sizeof to, "%s/w/index", fx.root);
	cr_assert(rename(from, to) == 0);
	struct stat st;
	cr_assert(stat(w->path, &st) == 0);
	cr_expect(st.PF_CTIM.tv_sec != w->ctime_s || st.PF_CTIM.tv_nsec != w->ctime_ns,
		  "the rename left the directory's times as they were");
	cr_assert(pf_deps_check(a, p.deps, p.ndeps, &bad), "%s differs", p.deps[bad].path);
	/* The same count of entries, one name changed. */
	snprintf(from, sizeof from, "%s/w/index-renamed", fx.root);
	cr_assert(rename(to, from) == 0);
	cr_assert(!pf_deps_check(a, p.deps, p.ndeps, &bad));
	cr_expect_str_eq(p.deps[bad].path, w->path);
	cr_assert(rename(from, to) == 0);
	cr_assert(pf_deps_check(a, p.deps, p.ndeps, &bad), "%s differs", p.deps[bad].path);
	/* A name of a type the build did not see: index as a directory. */
	cr_assert(unlink(to) == 0 && mkdir(to, 0755) == 0);
	cr_assert(!pf_deps_check(a, p.deps, p.ndeps, &bad));
	cr_assert(rmdir(to) == 0);
	cage_policy_free(f.pol);
}

/* A listing's entries are names, in order, only on a listing: written
 * otherwise (and sealed), the artifact is refused. */
Test(pf, entries_out_of_order_or_off_a_listing_are_refused)
{
	struct fx f;
	build(&f);
	struct arena *a = &f.pol->arena;
	struct pf_plan p;
	char err[512];
	cr_assert(pf_read(a, f.bytes, f.len, &p, err, sizeof err), "%s", err);
	struct pf_dep *w = (struct pf_dep *)listing_of_w(&p);
	cr_assert(w->listed && w->nentries >= 2, "w holds %zu entries", w->nentries);
	const char **names = arena_alloc(a, w->nentries * sizeof *names);
	memcpy(names, w->entry_names, w->nentries * sizeof *names);
	const char *const *orig = w->entry_names;
	const char *t = names[0];
	names[0] = names[1];
	names[1] = t;
	w->entry_names = names;
	uint8_t *b;
	size_t n;
	pf_write(a, &p, &b, &n);
	struct pf_plan q;
	cr_assert(!pf_read(a, b, n, &q, err, sizeof err));
	cr_assert(strstr(err, "order"), "%s", err);
	names[1] = "a/b";
	names[0] = orig[0];
	pf_write(a, &p, &b, &n);
	cr_assert(!pf_read(a, b, n, &q, err, sizeof err));
	cr_assert(strstr(err, "not a name"), "%s", err);
	w->entry_names = orig;
	w->kind = PF_DEP_LSTAT;
	pf_write(a, &p, &b, &n);
	cr_assert(!pf_read(a, b, n, &q, err, sizeof err));
	cr_assert(strstr(err, "not a listing"), "%s", err);
	w->kind = PF_DEP_LIST;
	pf_write(a, &p, &b, &n);
	cr_assert(pf_read(a, b, n, &q, err, sizeof err), "%s", err);
	cage_policy_free(f.pol);
}

Test(pf, observations_agree_only_on_the_same_state)
{
	struct arena a;
	arena_init(&a);
	char p[600];
	snprintf(p, sizeof p, "%s/w", fx.root);
	struct pf_dep x, y;
	pf_observe(&a, PF_DEP_LIST, p, &x, NULL);
	pf_observe(&a, PF_DEP_LIST, p, &y, NULL);
	cr_assert(pf_dep_same(&x, &y));
	fx_file(&fx, "w/new", "", 0644); /* moves the listing's times */
	pf_observe(&a, PF_DEP_LIST, p, &y, NULL);
	cr_assert(!pf_dep_same(&x, &y));
	snprintf(p, sizeof p, "%s/nothing", fx.root);
	pf_observe(&a, PF_DEP_LSTAT, p, &x, NULL);
	cr_assert(x.err != 0);
	fx_file(&fx, "nothing", "", 0644);
	pf_observe(&a, PF_DEP_LSTAT, p, &y, NULL);
	cr_assert(!pf_dep_same(&x, &y));
	arena_free(&a);
}

/* A dependency observed in `a` at fx.root/rel; for a listing, with its
 * entries as they are now. */
static struct pf_dep dep_at(struct arena *a, enum pf_dep_kind kind, const char *rel)
{
	char *path = arena_alloc(a, strlen(fx.root) + strlen(rel) + 2);
	sprintf(path, "%s/%s", fx.root, rel);
	struct pf_dep d;
	pf_observe(a, kind, path, &d, NULL);
	if (kind == PF_DEP_LIST && !d.err) {
		struct pf_listing l;
		cr_assert_eq(pf_list_read(a, path, &l), 1);
		d.listed = true;
		d.nentries = l.n;
		d.entry_names = l.names;
		d.entry_types = l.types;
	}
	return d;
}

/* The check answers a path from one it has just confirmed: below a
 * missing path, and a name that an agreeing listing does not hold. That
 * is seen with a listing recorded with fewer entries than its directory
 * has (its times are the directory's own): the name left out is taken as
 * missing without being looked up. Every real change is still caught,
 * whichever of the two comes first, and ".", ".." and a trailing "/" are
 * always looked up. */
Test(pf, answers_that_follow_from_a_checked_path_are_not_asked_again)
{
	struct arena a;
	arena_init(&a);
	fx_mkdirs(&fx, "d");
	fx_file(&fx, "d/a", "", 0644);
	fx_file(&fx, "d/b", "", 0644);
	struct pf_dep deps[6];
	deps[0] = dep_at(&a, PF_DEP_LIST, "d");
	/* The record leaves b out of the listing and says d/b is missing. */
	cr_assert_eq(deps[0].nentries, 2);
	deps[0].nentries = 1;
	cr_assert_str_eq(deps[0].entry_names[0], "a");
	deps[1] = dep_at(&a, PF_DEP_LSTAT, "d/b");
	cr_assert_eq(deps[1].err, 0, "control: d/b is there");
	deps[1].err = ENOENT;
	deps[1].dev = deps[1].ino = 0;
	deps[1].mode = 0;
	deps[2] = dep_at(&a, PF_DEP_LSTAT, "m");
	deps[3] = dep_at(&a, PF_DEP_STAT, "m/x/y");
	deps[4] = dep_at(&a, PF_DEP_LSTAT, "d/zz/q");
	deps[5] = dep_at(&a, PF_DEP_LSTAT, "d/a");
	cr_assert(deps[2].err == ENOENT && deps[3].err == ENOENT && deps[4].err == ENOENT);
	size_t bad;
	cr_assert(pf_deps_check(&a, deps, 6, &bad), "%s differs", deps[bad].path);
	/* Looked up, the same record fails: the listing is what answered. */
	cr_assert(!pf_deps_check(&a, deps + 1, 5, &bad));
	cr_assert_eq(bad, 0);

	/* Real changes, caught at the path above them. */
	struct pf_dep real[4] = { dep_at(&a, PF_DEP_LIST, "d"), dep_at(&a, PF_DEP_LSTAT, "d/c"),
				  dep_at(&a, PF_DEP_LSTAT, "m"), dep_at(&a, PF_DEP_LSTAT, "m/x") };
	cr_assert(pf_deps_check(&a, real, 4, &bad), "%s differs", real[bad].path);
	fx_mkdirs(&fx, "m/x");
	cr_assert(!pf_deps_check(&a, real, 4, &bad));
	cr_assert_eq(bad, 2);
	struct timespec tick = { 0, 20 * 1000 * 1000 };
	nanosleep(&tick, NULL);
	fx_file(&fx, "d/c", "", 0644);
	cr_assert(!pf_deps_check(&a, real, 4, &bad));
	cr_assert_eq(bad, 0);
	/* The child first: looked up itself. */
	struct pf_dep swapped[2] = { real[1], real[0] };
	cr_assert(!pf_deps_check(&a, swapped, 2, &bad));
	cr_assert_eq(bad, 0);

	/* Names a listing never holds are looked up, not taken as missing. */
	struct pf_dep dots[2] = { dep_at(&a, PF_DEP_LIST, "d"), dep_at(&a, PF_DEP_LSTAT, "d/..") };
	cr_assert_eq(dots[1].err, 0);
	cr_assert(pf_deps_check(&a, dots, 2, &bad), "%s differs", dots[bad].path);
	const char *odd[] = { "d/..", "d/.", "d/" };
	for (size_t i = 0; i < 3; i++) {
		dots[1] = dep_at(&a, PF_DEP_LSTAT, odd[i]);
		cr_assert_eq(dots[1].err, 0, "control: %s exists", odd[i]);
		dots[1].err = ENOENT;
		dots[1].dev = dots[1].ino = 0;
		dots[1].mode = 0;
		cr_assert(!pf_deps_check(&a, dots, 2, &bad), "%s taken as missing", odd[i]);
		cr_assert_eq(bad, 1);
	}
	arena_free(&a);
}
