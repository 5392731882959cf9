/*
 * emit.c - the table of backends (see emit.h). A backend joins by adding
 * one line here; nothing else in the compiler needs to know it exists.
 */
#include "emit.h"

#include "cpt_write.h"
#include "lplan.h"
#include "sbpl.h"

#include <string.h>

static const struct emit_backend backends[] = {
	{ "ir", "the resolved rule list as stable text", false, emit_ir },
	{ "sbpl", "Seatbelt profile for macOS sandbox-exec", false, sbpl_emit },
	{ "table", "the proxy rule table (binary, docs/proxy-table.md)", true, cpt_emit },
	{ "linux", "the Linux plan on this machine: Landlock grants and mounts", false,
	  lplan_emit },
	{ "plan", "the Linux plan artifact cagerun enforces (binary, docs/plan-format.md)", true,
	  lplan_emit_artifact },
};

const struct emit_backend *emit_backends(size_t *n)
{
	*n = sizeof(backends) / sizeof(backends[0]);
	return backends;
}

const struct emit_backend *emit_find(const char *name)
{
	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
		if (strcmp(backends[i].name, name) == 0)
			return &backends[i];
	return NULL;
}
