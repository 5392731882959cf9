/*
 * lint_guard.c - guard-opened: a grant that lets the session change what
 * std/guard keeps from it (git hooks and config, shell and editor startup
 * files, agent settings), because those run code outside the cage after
 * the session. Reported whether or not std/guard is imported: a policy
 * without it, or with its own copy that leaves an entry out, is exactly
 * what the user should hear about once, with the reason.
 *
 * The table mirrors stdlib/std/guard.cage (the lint/guard test checks that
 * a policy importing it hears nothing). "{workspace}" entries are checked
 * only when the policy has a path param of that name.
 */
#include "lint_int.h"

#include <stdlib.h>
#include <string.h>

#include "path.h"

struct guard_entry {
	const char *pattern; /* "{workspace}/...", "~/..." */
	const char *why;
};

static const struct guard_entry entries[] = {
	{ "{workspace}/.git/hooks/**", "git runs hooks on commit, checkout, merge and push" },
	{ "~/.git/hooks/**", "git runs hooks on commit, checkout, merge and push" },
	{ "{workspace}/.git/config", "core.hooksPath, core.fsmonitor, core.sshCommand and filter drivers run commands" },
	{ "~/.git/config", "core.hooksPath, core.fsmonitor, core.sshCommand and filter drivers run commands" },
	{ "{workspace}/.git/commondir", "it points git at another repository's config, whose core.fsmonitor and drivers run commands" },
	{ "~/.git/commondir", "it points git at another repository's config, whose core.fsmonitor and drivers run commands" },
	{ "{workspace}/.git/info/**", "info/attributes chooses the filter and diff drivers git runs" },
	{ "{workspace}/.git/modules/**/hooks/**", "a submodule's hooks run like the repository's" },
	{ "{workspace}/.git/modules/**/config", "a submodule's config runs commands like the repository's" },
	{ "{workspace}/.git/worktrees/*/commondir", "a linked worktree's commondir points git at another repository's config" },
	{ "{workspace}/.git/worktrees/*/config.worktree", "a linked worktree's config runs commands like the repository's" },
	{ "{workspace}/.gitmodules", "submodule update commands run on `git submodule update`" },
	{ "~/.gitmodules", "submodule update commands run on `git submodule update`" },
	{ "~/.gitconfig", "the user's git config runs commands in every repository" },
	{ "~/.config/git/config", "the user's git config runs commands in every repository" },
	{ "~/.bashrc", "bash runs it for every interactive shell" },
	{ "~/.bash_profile", "bash runs it at login" },
	{ "~/.bash_login", "bash runs it at login" },
	{ "~/.bash_logout", "bash runs it at logout" },
	{ "~/.profile", "login shells run it" },
	{ "~/.zshenv", "zsh runs it for every zsh, scripts included" },
	{ "~/.zprofile", "zsh runs it at login" },
	{ "~/.zshrc", "zsh runs it for every interactive shell" },
	{ "~/.zlogin", "zsh runs it at login" },
	{ "{workspace}/.bashrc", "a project's shell startup file, sourced by hand or through ZDOTDIR" },
	{ "{workspace}/.bash_profile", "a project's shell startup file, sourced by hand or through ZDOTDIR" },
	{ "{workspace}/.profile", "a project's shell startup file, sourced by hand or through ZDOTDIR" },
	{ "{workspace}/.zshrc", "a project's shell startup file, sourced by hand or through ZDOTDIR" },
	{ "{workspace}/.zprofile", "a project's shell startup file, sourced by hand or through ZDOTDIR" },
	{ "{workspace}/.zshenv", "a project's shell startup file, sourced by hand or through ZDOTDIR" },
	{ "{workspace}/.envrc", "direnv runs it on cd into the directory" },
	{ "~/.envrc", "direnv runs it on cd into the directory" },
	{ "{workspace}/.vscode/**", "VS Code runs its tasks (some when the folder is opened) and the programs its settings name" },
	{ "~/.vscode/**", "VS Code loads the extensions installed there" },
	{ "{workspace}/.idea/**", "JetBrains IDEs run its run configurations and startup tasks" },
	{ "~/.idea/**", "JetBrains IDEs run its run configurations and startup tasks" },
	{ "{workspace}/.mcp.json", "agents start the MCP servers it names" },
	{ "~/.mcp.json", "agents start the MCP servers it names" },
	{ "{workspace}/.claude/settings.json", "Claude Code runs its hooks, MCP servers and status line command" },
	{ "{workspace}/.claude/settings.local.json", "Claude Code runs its hooks, MCP servers and status line command" },
	{ "~/.claude/settings.json", "Claude Code runs its hooks, MCP servers and status line command" },
	{ "~/.claude/settings.local.json", "Claude Code runs its hooks, MCP servers and status line command" },
	{ "{workspace}/.claude/commands/**", "Claude Code's custom slash commands" },
	{ "~/.claude/commands/**", "Claude Code's custom slash commands" },
	{ "{workspace}/.claude/agents/**", "Claude Code's subagents" },
	{ "~/.claude/agents/**", "Claude Code's subagents" },
	{ "~/.claude/plugins/**", "Claude Code plugins bring hooks and MCP servers" },
	{ "{workspace}/.codex/config.toml", "Codex starts its MCP servers and runs its notify command" },
	{ "~/.codex/config.toml", "Codex starts its MCP servers and runs its notify command" },
	{ "{workspace}/.gemini/settings.json", "Gemini CLI starts its MCP servers and runs its hooks" },
	{ "~/.gemini/settings.json", "Gemini CLI starts its MCP servers and runs its hooks" },
	{ "{workspace}/.gemini/commands/**", "Gemini CLI's custom commands may run shell commands" },
	{ "~/.gemini/commands/**", "Gemini CLI's custom commands may run shell commands" },
	{ "~/.gemini/extensions/**", "Gemini CLI extensions bring MCP servers" },
	{ "~/.config/cage/**", "cagerun's approvals of project layers and the user's agent layers widen later sessions" },
};

enum { N_ENTRIES = sizeof entries / sizeof entries[0],
       WRITE_BITS = IR_A_WRITE | IR_A_CREATE | IR_A_DELETE };

static const char *workspace_of(const struct lint_ctx *c)
{
	for (size_t i = 0; i < c->ir->nparams; i++) {
		const struct ir_param *q = &c->ir->params[i];
		if (q->type == IR_P_PATH && q->value && strcmp(q->name, "workspace") == 0)
			return q->value;
	}
	return NULL;
}

/* An entry as an IR pattern; false when the policy lacks what it needs. */
static bool entry_pat(const struct lint_ctx *c, const char *ws, const struct guard_entry *e,
		      struct ir_path *out, char *buf, size_t size)
{
	memset(out, 0, sizeof *out);
	static const char wsk[] = "{workspace}";
	if (strncmp(e->pattern, wsk, sizeof wsk - 1) == 0) {
		if (!ws)
			return false;
		snprintf(buf, size, "%s%s", strcmp(ws, "/") ? ws : "", e->pattern + sizeof wsk - 1);
	} else {
		if (!c->ir->home)
			return false;
		snprintf(buf, size, "%s%s", c->ir->home, e->pattern + 1);
		out->home_len = (uint32_t)strlen(c->ir->home);
	}
	out->text = buf;
	path_classify(out);
	return true;
}

/* Does a protect, or a deny after A, keep `bits` of all of E? */
static bool kept(struct lint_ctx *c, const struct ir_rule *A, const struct ir_path *E, uint32_t bits)
{
	lint_ix_comparable(c, E->text, E->lit_prefix, IR_T_PATH);
	for (size_t k = 0; k < c->ncand; k++) {
		const struct ir_rule *L = &c->prof->rules[c->cand[k]];
		if (L->effect == IR_ALLOW || (L->access & bits) != bits)
			continue;
		if (L->effect == IR_DENY && L->index < A->index)
			continue;
		if (lint_path_contains(L, E) == PAT_YES)
			return true;
		/* std/guard's git allowlist: its excepts name what git writes,
		 * and a submodule named like one of those (".../objects") meets
		 * them only by name; docs/stdlib.md says why that opens nothing
		 * a new repository in the workspace would not. */
		if (L->nexcept && lint_is_guard(L->loc.file) &&
		    pat_path_contains(&L->t.path, E, NULL, 0) == PAT_YES)
			return true;
	}
	return false;
}

static void check_grant(struct lint_ctx *c, const char *ws, const struct ir_rule *A)
{
	uint32_t bits = A->access & WRITE_BITS;
	size_t n = 0, first = 0;
	char list[1024] = "";
	size_t len = 0;
	for (size_t i = 0; i < N_ENTRIES; i++) {
		char buf[4096];
		struct ir_path E;
		if (!entry_pat(c, ws, &entries[i], &E, buf, sizeof buf))
			continue;
		if (pat_path_overlap(&A->t.path, &E, NULL, 0) == PAT_NO || kept(c, A, &E, bits))
			continue;
		if (n == 0)
			first = i;
		if (n < 3) {
			char shown[1024];
			lint_show_path(&E, E.text, shown, sizeof shown);
			int w = snprintf(list + len, sizeof list - len, "%s%s", n ? ", " : "", shown);
			if (w > 0 && (size_t)w < sizeof list - len)
				len += (size_t)w;
		}
		n++;
	}
	if (!n)
		return;
	char rt[1200], more[64] = "";
	lint_rule_text(A, rt, sizeof rt);
	if (n > 3)
		snprintf(more, sizeof more, " and %zu more", n - 3);
	lint_report(c, "guard-opened", A, NULL,
		    "%s lets the session change %s%s, which std/guard keeps: %s%s, after the "
		    "session and outside the cage; import \"std/guard\", or suppress this with "
		    "the reason if it is meant",
		    rt, list, more, entries[first].why, n > 1 ? " (and the others run code too)" : "");
}

void lint_check_guard(struct lint_ctx *c)
{
	const char *ws = workspace_of(c);
	for (size_t i = 0; i < c->prof->nrules; i++) {
		const struct ir_rule *A = &c->prof->rules[i];
		if (A->effect != IR_ALLOW || A->tkind != IR_T_PATH || !(A->access & WRITE_BITS) ||
		    lint_is_std(A->loc.file))
			continue;
		check_grant(c, ws, A);
	}
}
