/*
 * test_limit.c - resource limits: how two layers' limits combine (the
 * tightest wins, an enforced one beats a best-effort one on a tie), their
 * text form, and the open-file limit the command gets from cagerun's.
 */
#include <criterion/criterion.h>
#include <string.h>
#include <sys/resource.h>

#include "ir.h"
#include "runcommon.h"

static struct ir_limit lim(uint64_t value, uint64_t unit, bool be)
{
	return (struct ir_limit){ .set = true, .value = value, .unit = unit, .best_effort = be };
}

Test(limit, tightest_wins_in_either_order)
{
	struct ir_limit a = lim(4096, 1, false), b = lim(100000, 1, false);
	struct ir_limit d = { 0 };
	ir_limit_merge(&d, &a);
	ir_limit_merge(&d, &b);
	cr_assert_eq(d.value, 4096);
	d = (struct ir_limit){ 0 };
	ir_limit_merge(&d, &b);
	ir_limit_merge(&d, &a);
	cr_assert_eq(d.value, 4096);
}

Test(limit, unset_is_no_bound)
{
	struct ir_limit d = lim(10, 1, false), none = { 0 };
	ir_limit_merge(&d, &none);
	cr_assert(d.set);
	cr_assert_eq(d.value, 10);
}

Test(limit, enforced_beats_best_effort_on_a_tie)
{
	struct ir_limit be = lim(8ull << 30, 1ull << 30, true), strict = lim(8ull << 30, 1ull << 20, false);
	struct ir_limit d = { 0 };
	ir_limit_merge(&d, &be);
	ir_limit_merge(&d, &strict);
	cr_assert(!d.best_effort);
	ir_limit_merge(&d, &be);
	cr_assert(!d.best_effort, "a best-effort tie does not take the place of an enforced one");
	/* A tighter best-effort one wins, best-effort with it. */
	struct ir_limit tighter = lim(1ull << 30, 1ull << 30, true);
	ir_limit_merge(&d, &tighter);
	cr_assert(d.best_effort);
	cr_assert_eq(d.value, 1ull << 30);
}

Test(limit, display_as_written)
{
	char buf[64];
	struct ir_limit l = lim(8192ull << 20, 1ull << 20, true);
	ir_limit_display(&l, true, buf, sizeof buf);
	cr_assert_str_eq(buf, "8192 MiB best-effort");
	ir_limit_display(&l, false, buf, sizeof buf);
	cr_assert_str_eq(buf, "8192 MiB");
	l = lim(2048, 1, false);
	ir_limit_display(&l, true, buf, sizeof buf);
	cr_assert_str_eq(buf, "2048");
	cr_assert_str_eq(ir_limit_name(IR_LIM_TMP), "tmp");
	cr_assert(ir_limit_sized(IR_LIM_MEMORY) && !ir_limit_sized(IR_LIM_FILES));
}

Test(limit, nofile_lowers_never_raises)
{
	struct ir_profile p;
	memset(&p, 0, sizeof p);
	struct rlimit start = { 1024, 524288 }, out;
	run_nofile_for(&p, &start, &out);
	cr_assert(out.rlim_cur == 1024 && out.rlim_max == 524288, "no limit: as started");
	p.limits[IR_LIM_FILES] = lim(65536, 1, false);
	run_nofile_for(&p, &start, &out);
	cr_assert(out.rlim_cur == 1024 && out.rlim_max == 65536, "soft kept, hard lowered");
	p.limits[IR_LIM_FILES] = lim(64, 1, false);
	run_nofile_for(&p, &start, &out);
	cr_assert(out.rlim_cur == 64 && out.rlim_max == 64, "both lowered");
	struct rlimit low = { 256, 512 };
	p.limits[IR_LIM_FILES] = lim(65536, 1, false);
	run_nofile_for(&p, &low, &out);
	cr_assert(out.rlim_cur == 256 && out.rlim_max == 512, "never above the hard limit");
	struct rlimit inf = { RLIM_INFINITY, RLIM_INFINITY };
	run_nofile_for(&p, &inf, &out);
	cr_assert(out.rlim_cur == 65536 && out.rlim_max == 65536, "infinity lowered");
}
