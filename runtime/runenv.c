/*
 * runenv.c - the command's environment (see runenv.h).
 */
#include "runenv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct env {
	char **v;
	size_t n, cap;
	bool oom;
};

static size_t name_len(const char *entry)
{
	const char *eq = strchr(entry, '=');
	return eq ? (size_t)(eq - entry) : strlen(entry);
}

static void env_unset(struct env *e, const char *name)
{
	size_t nl = strlen(name);
	for (size_t i = 0; i < e->n; i++)
		if (name_len(e->v[i]) == nl && !strncmp(e->v[i], name, nl)) {
			free(e->v[i]);
			e->v[i] = e->v[--e->n];
			e->v[e->n] = NULL;
			return;
		}
}

static void env_put(struct env *e, const char *name, const char *value)
{
	env_unset(e, name);
	if (e->n + 2 > e->cap) {
		size_t cap = e->cap ? e->cap * 2 : 32;
		char **v = realloc(e->v, cap * sizeof *v);
		if (!v) {
			e->oom = true;
			return;
		}
		e->v = v;
		e->cap = cap;
	}
	size_t len = strlen(name) + strlen(value) + 2;
	char *s = malloc(len);
	if (!s) {
		e->oom = true;
		return;
	}
	snprintf(s, len, "%s=%s", name, value);
	e->v[e->n++] = s;
	e->v[e->n] = NULL;
}

static const char *lookup(char *const *env, const char *name)
{
	size_t nl = strlen(name);
	for (; env && *env; env++)
		if (name_len(*env) == nl && !strncmp(*env, name, nl) && (*env)[nl] == '=')
			return *env + nl + 1;
	return NULL;
}

char **runenv_build(const struct ir_profile *p, char *const *parent,
		    const struct runenv_extra *x)
{
	struct env e = { 0 };
	env_put(&e, "TMPDIR", x->tmp); /* also makes e.v non-NULL */
	for (size_t i = 0; i < p->nenv; i++) {
		const struct ir_env_op *op = &p->env[i];
		const char *v;
		switch (op->kind) {
		case IR_ENV_KEEP:
			if ((v = lookup(parent, op->name)))
				env_put(&e, op->name, v);
			break;
		case IR_ENV_SET:
			env_put(&e, op->name, op->value);
			break;
		case IR_ENV_UNSET:
			env_unset(&e, op->name);
			break;
		}
	}
	env_put(&e, "TMPDIR", x->tmp);
	if (x->prompt)
		env_put(&e, "PS1", x->prompt);
	if (x->home)
		env_put(&e, "HOME", x->home);
	if (x->proxy) {
		static const char *const names[] = { "http_proxy", "https_proxy", "HTTP_PROXY",
						     "HTTPS_PROXY" };
		for (size_t i = 0; i < 4; i++)
			env_put(&e, names[i], x->proxy);
		env_put(&e, "no_proxy", "localhost,127.0.0.1,::1");
		env_put(&e, "NO_PROXY", "localhost,127.0.0.1,::1");
	}
	for (const char *const *a = x->agent; a && *a; a++) {
		const char *eq = strchr(*a, '=');
		char name[128];
		if (!eq || (size_t)(eq - *a) >= sizeof name)
			continue;
		memcpy(name, *a, (size_t)(eq - *a));
		name[eq - *a] = '\0';
		env_put(&e, name, eq + 1);
	}
	/* a version manager's bin directories first, on the PATH the policy
	 * keeps or sets (none kept: the program was found by its path) */
	const char *cur = x->path_prefix && *x->path_prefix && e.v ? lookup(e.v, "PATH") : NULL;
	if (cur) {
		size_t n = strlen(x->path_prefix) + strlen(cur) + 2;
		char *pv = malloc(n);
		if (pv) {
			snprintf(pv, n, "%s%s%s", x->path_prefix, *cur ? ":" : "", cur);
			env_put(&e, "PATH", pv);
			free(pv);
		} else {
			e.oom = true;
		}
	}
	/* Claude Code refuses --dangerously-skip-permissions as root unless
	 * it is told that it runs in a sandbox; in enforce mode it does. Set,
	 * never kept: a value from outside says nothing about this run. */
	if (x->enforce)
		env_put(&e, "IS_SANDBOX", "1");
	else
		env_unset(&e, "IS_SANDBOX");
	/* git must neither prompt (there is nobody to answer) nor run what a
	 * repository's own config names: hooks, credential helpers, askpass,
	 * fsmonitor. Empty askpass values make git skip askpass altogether. */
	env_put(&e, "GIT_TERMINAL_PROMPT", "0");
	env_put(&e, "GIT_ASKPASS", "");
	env_put(&e, "SSH_ASKPASS", "");
	env_put(&e, "GIT_CONFIG_COUNT", "4");
	env_put(&e, "GIT_CONFIG_KEY_0", "core.hooksPath");
	env_put(&e, "GIT_CONFIG_VALUE_0", "/dev/null");
	env_put(&e, "GIT_CONFIG_KEY_1", "credential.helper");
	env_put(&e, "GIT_CONFIG_VALUE_1", "");
	env_put(&e, "GIT_CONFIG_KEY_2", "core.askPass");
	env_put(&e, "GIT_CONFIG_VALUE_2", "");
	env_put(&e, "GIT_CONFIG_KEY_3", "core.fsmonitor");
	env_put(&e, "GIT_CONFIG_VALUE_3", "false");
	if (e.oom) {
		runenv_free(e.v);
		return NULL;
	}
	return e.v;
}

void runenv_free(char **env)
{
	for (char **p = env; p && *p; p++)
		free(*p);
	free(env);
}
