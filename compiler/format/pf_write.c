/*
 * pf_write.c - a struct pf_plan to the bytes of a plan artifact (layout in
 * pf_format.h, prose in docs/plan-format.md). Output is a function of the
 * plan alone: no clock, no addresses, so the same plan gives the same file.
 */
#include "pf.h"

#include <string.h>

#include <xxhash.h>

#include "pf_format.h"

struct wbuf {
	struct arena *a;
	uint8_t *b;
	size_t len, cap;
};

static uint8_t *room(struct wbuf *w, size_t n)
{
	if (w->len + n > w->cap) {
		size_t cap = w->cap ? w->cap : 4096;
		while (cap < w->len + n)
			cap *= 2;
		w->b = arena_grow(w->a, w->b, w->len, cap, 1);
		w->cap = cap;
	}
	uint8_t *p = w->b + w->len;
	w->len += n;
	return p;
}

static void w8(struct wbuf *w, uint8_t v)
{
	*room(w, 1) = v;
}

static void w16(struct wbuf *w, uint16_t v)
{
	pf_wr16(room(w, 2), v);
}

static void w32(struct wbuf *w, uint32_t v)
{
	pf_wr32(room(w, 4), v);
}

static void w64(struct wbuf *w, uint64_t v)
{
	pf_wr64(room(w, 8), v);
}

static void wstr(struct wbuf *w, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	w32(w, (uint32_t)n);
	if (n)
		memcpy(room(w, n), s, n);
}

static void wrules(struct wbuf *w, const struct pf_rule *r, size_t n)
{
	w32(w, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		w32(w, r[i].orig);
		wstr(w, r[i].text);
		w32(w, r[i].nexcept);
		for (uint32_t j = 0; j < r[i].nexcept; j++)
			wstr(w, r[i].except[j]);
	}
}

void pf_write(struct arena *a, const struct pf_plan *p, uint8_t **out, size_t *len)
{
	struct wbuf w = { .a = a };
	memcpy(room(&w, 8), PF_MAGIC, 8);
	w16(&w, PF_VERSION);
	w16(&w, PF_HDR_SIZE);
	w32(&w, 0); /* flags */
	w64(&w, 0); /* file size, set below */

	const struct pf_key *k = &p->key;
	w64(&w, k->fingerprint);
	w64(&w, k->digest_lo);
	w64(&w, k->digest_hi);
	w32(&w, k->uid);
	wstr(&w, k->home);
	wstr(&w, k->cwd);
	wstr(&w, k->profile);
	w32(&w, (uint32_t)k->nparams);
	for (size_t i = 0; i < k->nparams; i++) {
		wstr(&w, k->params[i].name);
		wstr(&w, k->params[i].value);
	}
	w32(&w, p->nrules);

	w32(&w, (uint32_t)p->nnodes);
	for (size_t i = 0; i < p->nnodes; i++) {
		const struct pf_node *n = &p->nodes[i];
		wstr(&w, n->path);
		w8(&w, n->flags);
		w32(&w, n->mount);
		w64(&w, n->grant);
		w64(&w, n->ll);
		w64(&w, n->block);
		w32(&w, n->rule);
		w32(&w, n->parent);
	}
	w32(&w, (uint32_t)p->nmkdirs);
	for (size_t i = 0; i < p->nmkdirs; i++)
		wstr(&w, p->mkdirs[i]);
	w32(&w, (uint32_t)p->nnotes);
	for (size_t i = 0; i < p->nnotes; i++) {
		w32(&w, p->notes[i].rule);
		wstr(&w, p->notes[i].text);
	}
	w32(&w, (uint32_t)p->nports);
	for (size_t i = 0; i < p->nports; i++) {
		w16(&w, p->ports[i].port);
		w32(&w, p->ports[i].rule);
	}
	w32(&w, (uint32_t)p->nguards);
	for (size_t i = 0; i < p->nguards; i++) {
		wstr(&w, p->guards[i].pattern);
		w32(&w, p->guards[i].rule);
	}
	wrules(&w, p->gprof, p->ngprof);
	wrules(&w, p->rprof, p->nrprof);
	w64(&w, p->ngrants);
	w64(&w, p->nmounts);

	w32(&w, (uint32_t)p->ndeps);
	for (size_t i = 0; i < p->ndeps; i++) {
		const struct pf_dep *d = &p->deps[i];
		w8(&w, d->kind);
		wstr(&w, d->path);
		w32(&w, (uint32_t)d->err);
		w64(&w, d->dev);
		w64(&w, d->ino);
		w32(&w, d->mode);
		w64(&w, (uint64_t)d->mtime_s);
		w64(&w, (uint64_t)d->mtime_ns);
		w64(&w, (uint64_t)d->ctime_s);
		w64(&w, (uint64_t)d->ctime_ns);
		wstr(&w, d->target);
		w8(&w, d->listed);
		w32(&w, (uint32_t)(d->listed ? d->nentries : 0));
		for (size_t k = 0; d->listed && k < d->nentries; k++) {
			w8(&w, d->entry_types[k]);
			wstr(&w, d->entry_names[k]);
		}
	}
	size_t total = w.len + PF_SUM_SIZE;
	pf_wr64(w.b + PF_H_FILESIZE, total);
	uint64_t sum = XXH3_64bits(w.b, w.len);
	w64(&w, sum);
	*out = w.b;
	*len = w.len;
}
