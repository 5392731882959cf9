/*
 * cage.h - the public interface of libcage, for agent hosts that embed the
 * policy compiler instead of shelling out to cagec.
 *
 * Loading never exits or prints: every problem becomes a diagnostic you can
 * read back. A policy with errors can still be inspected (diagnostics) but
 * not queried or emitted. All strings returned point into the policy and live
 * until cage_policy_free().
 */
#ifndef CAGE_H
#define CAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CAGE_VERSION_STRING "0.1.0"

typedef struct cage_options cage_options;
typedef struct cage_policy cage_policy;

const char *cage_version(void);

/* ---- options ---- */
cage_options *cage_options_new(void); /* NULL only on OOM */
void cage_options_free(cage_options *o);
/* -D name=value. Returns false when `def` has no '='. */
bool cage_options_define(cage_options *o, const char *def);
/* -I DIR: searched before the standard library. */
void cage_options_include(cage_options *o, const char *dir);
/* Where `import "std/..."` is found; default: BIN/../share/cage/stdlib
 * beside the running program, else the configured install path (hosts
 * that embed the library should name it; docs/install.md). */
void cage_options_stdlib(cage_options *o, const char *dir);
/* What `~` means; default: $HOME. */
void cage_options_home(cage_options *o, const char *dir);
/* Profile to select; default: the last profile of the main file. */
void cage_options_profile(cage_options *o, const char *name);
/* A value for a param no -D gave, asked for once the policy's files are
 * read, before any default is taken: `param` is its name, `decl` the name
 * of the file declaring it, `profile` the name of the profile that will
 * be selected (--profile, else the main file's last, else "main"). A
 * value returned (copied at once) is used exactly as `-D param=value`
 * would be; NULL takes the declared default. How a launcher gives a
 * value that depends on the profile without compiling twice. */
typedef const char *(*cage_param_fn)(void *ctx, const char *param, const char *decl,
				     const char *profile);
/* fn NULL: none (the default). */
void cage_options_param_fn(cage_options *o, cage_param_fn fn, void *ctx);
/* The platform to compile for, "linux" or "macos" (false otherwise, and
 * nothing changes). It picks the standard library's platform modules and
 * which backends apply ("sbpl" is macOS only). Default: the platform this
 * library was built for. */
bool cage_options_target(cage_options *o, const char *name);

/* Whether a and b would compile a policy alike: the same -D (in order),
 * -I, --stdlib, --home, --profile, target and param function. */
bool cage_options_same(const cage_options *a, const cage_options *b);

/* ---- loading ---- */
cage_policy *cage_load_file(const char *path, const cage_options *o);
cage_policy *cage_load_string(const char *name, const char *text, size_t len,
			      const cage_options *o);
void cage_policy_free(cage_policy *p);
/* Whether every file and path that loading p looked at on disk (files
 * read, paths probed on the search path, real paths taken) answers as it
 * did then; false with the first that does not in *changed. *n is how
 * many were asked. A policy loaded from a string looked at its imports
 * only. */
bool cage_inputs_unchanged(const cage_policy *p, const char **changed, size_t *n);
/* A compiled policy as bytes (malloc'd, the caller frees), and back: what
 * a launcher keeps on disk to run the same request again without
 * compiling (docs/cagerun.md, "A compile kept on disk"). Only a policy
 * with a selected profile and no diagnostic at all has an image (false
 * otherwise). The policy read back has everything a launch reads (the
 * IR, its source files, what the load looked at on disk, which the caller
 * asks again with cage_inputs_unchanged before trusting it) and no syntax
 * trees: lint and fmt need a fresh load. The bytes are checksummed and
 * checked as read, but they mean something only to the build that wrote
 * them: key them by the program's build. NULL with the reason in *why. */
bool cage_policy_image(const cage_policy *p, unsigned char **out, size_t *n);
cage_policy *cage_policy_from_image(const unsigned char *b, size_t n, const char **why);
/* The same without a copy, for the image at buf + off, n bytes: buf
 * (malloc'd) belongs to the policy from then on, and is freed with it (or
 * at once when NULL is returned). */
cage_policy *cage_policy_adopt_image(unsigned char *buf, size_t off, size_t n, const char **why);
/* The options as bytes that compare equal exactly when cage_options_same
 * says so, for a key (malloc'd, *n long; NULL on OOM). A param function
 * is recorded as present, not as which: two options with different
 * functions compare unequal only through cage_options_same. */
unsigned char *cage_options_key(const cage_options *o, size_t *n);

/* ---- diagnostics ---- */
enum cage_severity { CAGE_NOTE, CAGE_WARNING, CAGE_ERROR };

struct cage_diagnostic {
	enum cage_severity severity;
	const char *file; /* NULL when not about a file */
	unsigned line, column;
	const char *id;      /* stable check id */
	const char *message;
};

size_t cage_error_count(const cage_policy *p);
size_t cage_diagnostic_count(const cage_policy *p);
bool cage_diagnostic_get(const cage_policy *p, size_t i, struct cage_diagnostic *out);
/* gcc-style text with source line and caret. color: use ANSI colours. */
void cage_print_diagnostics(const cage_policy *p, FILE *out, bool color);

/* ---- queries (only when cage_error_count() == 0) ---- */
struct cage_verdict {
	bool allowed;
	bool by_default;   /* no rule matched: default deny */
	const char *rule;  /* the deciding rule as text, e.g. "allow read ~/src" */
	const char *file;  /* its location */
	unsigned line, column;
};

/* access: "read", "read-metadata", "write", "create", "delete", "exec",
 * "unix" (connect to a socket path) or "mach" (service name as `path`).
 * Returns false (with *err set to a static message) on bad arguments. */
bool cage_query_path(cage_policy *p, const char *access, const char *path,
		     struct cage_verdict *v, const char **err);
bool cage_query_host(cage_policy *p, const char *host, unsigned port,
		     struct cage_verdict *v, const char **err);

/* ---- backends ---- */
/* backend: "ir" (text), and "sbpl" / "table" once those backends exist.
 * cage_backend_name(i) names the i-th backend this build has (NULL past
 * the end). cage_emit returns false with a message in *err (static or
 * owned by p). */
const char *cage_backend_name(size_t i);
bool cage_emit(cage_policy *p, const char *backend, FILE *out, const char **err);
/* True when the selected profile has connect (host) rules, which the proxy
 * enforces: a profile written with "sbpl" then needs its "table" too. */
bool cage_has_host_rules(const cage_policy *p);

#ifdef __cplusplus
}
#endif
#endif
