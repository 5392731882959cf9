/*
 * lnx_kept.c - where a compile kept on disk lives on Linux (run.h's
 * run_kept_read, run_kept_write; runtime/layers/kept.h): beside the kept
 * plans, with their checks (lnx_plancache.h: the user's folder, 0700,
 * files 0600 with one link, never through a link, written whole by a
 * rename, read-only inside every sandbox), and the program's GNU build
 * ID and path, which key them to the build that wrote them and where it
 * runs from.
 */
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lnx_plancache.h"
#include "run.h"

bool run_kept_read(const char *name, unsigned char **out, size_t *n, char *why, size_t whylen)
{
	*out = NULL;
	*n = 0;
	why[0] = '\0';
	struct lnx_plancache c;
	if (!lnx_plancache_open(&c, why, whylen))
		return false;
	return lnx_plancache_read_owned(&c, name, out, n, why, whylen) == PLANCACHE_LOADED;
}

bool run_kept_write(const char *name, const unsigned char *b, size_t n)
{
	struct lnx_plancache c;
	char err[PATH_MAX + 200];
	return lnx_plancache_open(&c, err, sizeof err) &&
	       lnx_plancache_store(&c, name, b, n, err, sizeof err);
}

struct bid {
	unsigned char *out;
	size_t cap, n;
};

/* The first object is the program itself: its NT_GNU_BUILD_ID note. */
static int find_build_id(struct dl_phdr_info *info, size_t size, void *ctx)
{
	(void)size;
	struct bid *id = ctx;
	for (size_t i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
		const unsigned char *end = p + ph->p_memsz;
		while ((size_t)(end - p) >= sizeof(ElfW(Nhdr))) {
			const ElfW(Nhdr) *nh = (const void *)p;
			size_t name = (nh->n_namesz + 3) & ~(size_t)3, desc = (nh->n_descsz + 3) & ~(size_t)3;
			const unsigned char *d = p + sizeof *nh + name;
			if ((size_t)(end - p) < sizeof *nh + name || (size_t)(end - d) < desc)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(p + sizeof *nh, "GNU", 4) && nh->n_descsz > 0 &&
			    nh->n_descsz <= id->cap) {
				memcpy(id->out, d, nh->n_descsz);
				id->n = nh->n_descsz;
				return 1;
			}
			p = d + desc;
		}
	}
	return 1; /* only the program itself */
}

bool run_program_id(unsigned char *out, size_t cap, size_t *n)
{
	struct bid id = { out, cap, 0 };
	dl_iterate_phdr(find_build_id, &id);
	*n = id.n;
	if (!id.n)
		return false;
	/* Then where it runs from, as the standard library's default is found
	 * (stdlib_dir.c): the same build installed elsewhere reads another. */
	ssize_t k = readlink("/proc/self/exe", (char *)out + id.n, cap - id.n);
	if (k <= 0 || (size_t)k >= cap - id.n)
		return false;
	*n = id.n + (size_t)k;
	return true;
}
