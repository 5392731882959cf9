/*
 * cpt_dump.c - a loaded proxy table as text (`cagec --dump-table`), so a
 * reviewer can see exactly what the proxy will enforce: every rule in policy
 * order with its key, ports and source location, then the hash table.
 * The output only depends on the table bytes, so it can be diffed.
 */
#include "cpt.h"
#include "cpt_format.h"

#include <arpa/inet.h>
#include <inttypes.h>

static const char *kind_name(unsigned k)
{
	switch (k) {
	case CPT_K_NAME: return "name";
	case CPT_K_SUFFIX: return "suffix";
	case CPT_K_ANY: return "any";
	case CPT_K_IPV4: return "ipv4";
	case CPT_K_IPV6: return "ipv6";
	}
	return "?";
}

static void print_key(FILE *out, const struct cpt_table *t, const uint8_t *s)
{
	const uint8_t *key = t->pool + cpt_rd32(s + CPT_S_KEYOFF);
	unsigned len = cpt_rd16(s + CPT_S_KEYLEN);
	char buf[INET6_ADDRSTRLEN];

	switch (s[CPT_S_KIND]) {
	case CPT_K_NAME: fprintf(out, "%.*s", (int)len, (const char *)key); break;
	case CPT_K_SUFFIX: fprintf(out, "*.%.*s", (int)len, (const char *)key); break;
	case CPT_K_ANY: fputs("*", out); break;
	case CPT_K_IPV4:
		fputs(inet_ntop(AF_INET, key, buf, sizeof(buf)) ? buf : "?", out);
		break;
	case CPT_K_IPV6:
		fprintf(out, "[%s]", inet_ntop(AF_INET6, key, buf, sizeof(buf)) ? buf : "?");
		break;
	}
}

static void print_ports(FILE *out, const struct cpt_table *t, const uint8_t *r)
{
	uint32_t n = cpt_rd32(r + CPT_R_NPORTS);
	if (n == 0) {
		fputs("*", out);
		return;
	}
	const uint8_t *p = t->ports + (size_t)cpt_rd32(r + CPT_R_PORTOFF) * CPT_PORT_SIZE;
	for (uint32_t i = 0; i < n; i++, p += CPT_PORT_SIZE) {
		unsigned lo = cpt_rd16(p), hi = cpt_rd16(p + 2);
		fprintf(out, i ? ",%u" : "%u", lo);
		if (hi != lo)
			fprintf(out, "-%u", hi);
	}
}

bool cpt_dump(const struct cpt_table *t, FILE *out)
{
	static const char *flag_names[] = { "any", "suffix", "ip" };

	fprintf(out, "cage proxy table, format version %d\n", CPT_VERSION);
	fprintf(out, "profile: %s\n", cpt_profile(t));
	fprintf(out, "fingerprint: %016" PRIx64 "\n", t->fingerprint);
	fprintf(out, "size: %zu bytes\n", t->size);
	fputs("flags:", out);
	for (unsigned i = 0; i < 3; i++)
		if (t->flags & (1u << i))
			fprintf(out, " %s", flag_names[i]);
	fputs(t->flags ? "\n" : " none\n", out);
	fprintf(out, "rules: %u, keys: %u, slots: %u, port ranges: %u, pool: %u bytes, "
		     "max probe: %u\n",
		t->nrules, t->nkeys, t->nslots, t->nports, t->pool_size, t->max_probe);

	fputs("\n# rule effect kind key ports location written\n", out);
	for (uint32_t i = 0; i < t->nrules; i++) {
		const uint8_t *r = t->rules + (size_t)i * CPT_RULE_SIZE;
		const uint8_t *s = t->slots + (size_t)cpt_rd32(r + CPT_R_SLOT) * CPT_SLOT_SIZE;
		fprintf(out, "rule %u %s %s ", cpt_rd32(r + CPT_R_INDEX),
			cpt_effect_name((enum cpt_effect)r[CPT_R_EFFECT]), kind_name(r[CPT_R_KIND]));
		print_key(out, t, s);
		fputs(" ports ", out);
		print_ports(out, t, r);
		fprintf(out, " at %s \"%s\"\n", (const char *)t->pool + cpt_rd32(r + CPT_R_LOC),
			(const char *)t->pool + cpt_rd32(r + CPT_R_TEXT));
	}

	fputs("\n# slot probe kind key -> rules\n", out);
	for (uint32_t i = 0; i < t->nslots; i++) {
		const uint8_t *s = t->slots + (size_t)i * CPT_SLOT_SIZE;
		if (!s[CPT_S_KIND])
			continue;
		uint32_t home = (uint32_t)cpt_rd64(s + CPT_S_HASH) & (t->nslots - 1);
		fprintf(out, "slot %u %u %s ", i, (i - home) & (t->nslots - 1),
			kind_name(s[CPT_S_KIND]));
		print_key(out, t, s);
		fputs(" ->", out);
		uint32_t off = cpt_rd32(s + CPT_S_LISTOFF), n = cpt_rd32(s + CPT_S_LISTLEN);
		for (uint32_t k = 0; k < n; k++) {
			uint32_t e = cpt_rd32(t->list + (size_t)(off + k) * CPT_LIST_SIZE);
			fprintf(out, " %u", cpt_rd32(t->rules + (size_t)e * CPT_RULE_SIZE + CPT_R_INDEX));
		}
		fputc('\n', out);
	}
	return fflush(out) == 0 && !ferror(out);
}
