/*
 * test_lnx_limits.c - finding cagerun's own cgroup (lnx_limits.c) from
 * mountinfo and cgroup files: cgroup v1 with a pids hierarchy (as on hosts
 * that mount v1), the unified v2 hierarchy of a systemd user session, a
 * container whose cgroup mount starts below the hierarchy's root, and the
 * cases that must find nothing.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lnx_limits.h"

static char dir[64], mi[128], cg[128];

static void setup(void)
{
	snprintf(dir, sizeof dir, "/tmp/cage-cg-XXXXXX");
	cr_assert(mkdtemp(dir));
	snprintf(mi, sizeof mi, "%s/mountinfo", dir);
	snprintf(cg, sizeof cg, "%s/cgroup", dir);
}

static void teardown(void)
{
	unlink(mi);
	unlink(cg);
	rmdir(dir);
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert(f);
	fputs(text, f);
	fclose(f);
}

static const char v1_mounts[] =
	"91 90 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
	"99 95 0:32 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory\n"
	"103 95 0:36 / /sys/fs/cgroup/pids rw,nosuid - cgroup cgroup rw,pids\n"
	"104 95 0:37 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
	"105 95 0:38 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw\n";

Test(lnx_cgroup, v1_pids_at_the_root, .init = setup, .fini = teardown)
{
	char out[256];
	put(mi, v1_mounts);
	put(cg, "8:pids:/\n4:memory:/job/17\n0::/\n");
	cr_assert(lnx_cgroup_dir(mi, cg, "pids", out, sizeof out));
	cr_assert_str_eq(out, "/sys/fs/cgroup/pids");
	cr_assert(lnx_cgroup_dir(mi, cg, "memory", out, sizeof out));
	cr_assert_str_eq(out, "/sys/fs/cgroup/memory/job/17");
	cr_assert(lnx_cgroup_dir(mi, cg, NULL, out, sizeof out));
	cr_assert_str_eq(out, "/sys/fs/cgroup/unified");
	/* "cpu" is one controller of a shared mount, "cpuacct" the other;
	 * "cpu,cpuacct" is no controller. */
	put(cg, "3:cpu,cpuacct:/a\n");
	cr_assert(lnx_cgroup_dir(mi, cg, "cpuacct", out, sizeof out));
	cr_assert_str_eq(out, "/sys/fs/cgroup/cpu,cpuacct/a");
	cr_assert(!lnx_cgroup_dir(mi, cg, "cpu,cpuacct", out, sizeof out));
}

Test(lnx_cgroup, v2_user_session, .init = setup, .fini = teardown)
{
	char out[256];
	put(mi, "25 1 0:22 / /sys/fs/cgroup rw,nosuid,nodev - cgroup2 cgroup2 rw,nsdelegate\n");
	put(cg, "0::/user.slice/user-1000.slice/user@1000.service/app.slice/run-r1.scope\n");
	cr_assert(lnx_cgroup_dir(mi, cg, NULL, out, sizeof out));
	cr_assert_str_eq(out, "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/"
			      "run-r1.scope");
	cr_assert(!lnx_cgroup_dir(mi, cg, "pids", out, sizeof out), "no v1 pids mount");
}

Test(lnx_cgroup, container_mount_below_the_root, .init = setup, .fini = teardown)
{
	char out[256];
	/* The container sees its own cgroup as its mount's root. */
	put(mi, "30 20 0:27 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
	put(cg, "0::/docker/abc/inner\n");
	cr_assert(lnx_cgroup_dir(mi, cg, NULL, out, sizeof out));
	cr_assert_str_eq(out, "/sys/fs/cgroup/inner");
	put(cg, "0::/docker/abc\n");
	cr_assert(lnx_cgroup_dir(mi, cg, NULL, out, sizeof out));
	cr_assert_str_eq(out, "/sys/fs/cgroup");
	/* Outside what the mount shows (or a mere prefix of its root's name). */
	put(cg, "0::/docker/other\n");
	cr_assert(!lnx_cgroup_dir(mi, cg, NULL, out, sizeof out));
	put(cg, "0::/docker/abcd\n");
	cr_assert(!lnx_cgroup_dir(mi, cg, NULL, out, sizeof out));
}

Test(lnx_cgroup, nothing_to_find, .init = setup, .fini = teardown)
{
	char out[256];
	put(mi, "91 90 254:0 / / rw,relatime - ext4 /dev/vda rw\n");
	put(cg, "0::/\n");
	cr_assert(!lnx_cgroup_dir(mi, cg, NULL, out, sizeof out), "no cgroup2 mount");
	cr_assert(!lnx_cgroup_dir(mi, cg, "pids", out, sizeof out));
	cr_assert(!lnx_cgroup_dir(mi, "/nonexistent/cgroup", NULL, out, sizeof out));
	/* A name with an escape (a space in the mount point) is not used. */
	put(mi, "25 1 0:22 / /sys/fs/my\\040cg rw - cgroup2 cgroup2 rw\n");
	cr_assert(!lnx_cgroup_dir(mi, cg, NULL, out, sizeof out));
	/* Too small a buffer: nothing, never a truncated path. */
	put(mi, "25 1 0:22 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
	put(cg, "0::/a/very/long/path\n");
	char small[16];
	cr_assert(!lnx_cgroup_dir(mi, cg, NULL, small, sizeof small));
}

/* mountinfo as the kernel writes it: optional fields before " - ", a
 * mount with no super options, a truncated line, a field too long for
 * the parser (skipped, never cut and misread). */
Test(lnx_cgroup, mountinfo_fields, .init = setup, .fini = teardown)
{
	char out[256];
	put(cg, "8:pids:/x\n0::/\n");
	put(mi, "24 1 0:21 / /sys/fs/cgroup/pids rw,nosuid shared:9 master:2 - cgroup cgroup rw,pids\n");
	cr_assert(lnx_cgroup_dir(mi, cg, "pids", out, sizeof out));
	cr_assert_str_eq(out, "/sys/fs/cgroup/pids/x");
	put(mi, "24 1 0:21 / /sys/fs/cgroup/pids rw - cgroup cgroup\n");
	cr_assert(!lnx_cgroup_dir(mi, cg, "pids", out, sizeof out), "no options, no controller");
	put(mi, "24 1 0:21 / /sys/fs/cg2 rw - cgroup2 cgroup2\n");
	cr_assert(lnx_cgroup_dir(mi, cg, NULL, out, sizeof out), "v2 needs no options");
	cr_assert_str_eq(out, "/sys/fs/cg2");
	put(mi, "24 1 0:21 / - cgroup2 cgroup2 rw\n");
	cr_assert(!lnx_cgroup_dir(mi, cg, NULL, out, sizeof out), "no mount point");
	put(mi, "24 1 0:21 / /sys/fs/cg2 rw - cgroup2\n");
	cr_assert(!lnx_cgroup_dir(mi, cg, NULL, out, sizeof out), "no source");
	char big[1400];
	memset(big, 'a', sizeof big);
	memcpy(big, "24 1 0:21 / /", 13);
	snprintf(big + 1100, sizeof big - 1100, " rw - cgroup2 cgroup2 rw\n");
	put(mi, big);
	cr_assert(!lnx_cgroup_dir(mi, cg, NULL, out, sizeof out), "a mount point past the bound");
}
