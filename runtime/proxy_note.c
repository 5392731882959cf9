/*
 * proxy_note.c - what `cagerun --proxy-only` tells the user about the mode
 * of the profile it serves. The proxy alone always enforces the profile's
 * connect rules, but the mode says how `cagerun -- COMMAND` would treat the
 * network for that profile; a profile written for enforce-fs or off does
 * not route its command through any proxy, so someone testing its rules
 * with --proxy-only should hear that the two differ.
 */
#include "run.h"

#include "cage.h"
#include "policy.h"

void run_proxy_only_note(const cage_policy *p, FILE *out)
{
	const struct ir_profile *prof = p && p->ir ? p->ir->selected : NULL;
	if (!prof)
		return;
	const char *what;
	switch (prof->mode) {
	case IR_MODE_ENFORCE_FS:
		what = "its network is left open under `cagerun -- COMMAND` (no proxy, "
		       "connect rules not enforced); here the proxy still enforces them, for "
		       "the clients that are pointed at it";
		break;
	case IR_MODE_OFF:
		what = "`cagerun -- COMMAND` runs its command without any sandbox (no proxy, "
		       "connect rules not enforced); here the proxy still enforces them, for "
		       "the clients that are pointed at it";
		break;
	case IR_MODE_MONITOR:
		what = "monitor mode blocks nothing, but this proxy does enforce the "
		       "connect rules: it denies what they do not allow";
		break;
	case IR_MODE_ENFORCE:
	default:
		return;
	}
	const struct loc *l = &prof->mode_loc;
	if (l->file)
		fprintf(out, "%s:%u:%u: ", l->file->name, (unsigned)l->line, (unsigned)l->col);
	else
		fputs("cagerun: ", out);
	fprintf(out, "note: profile '%s' is in mode %s: %s\n", prof->name,
		ir_mode_name(prof->mode), what);
}
