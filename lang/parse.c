/*
 * parse.c - drives the lexer into the Lemon parser and builds the AST.
 *
 * Newline handling lives here rather than in the grammar: a newline after
 * ',' continues the statement, one is supplied before '}' and at end of file
 * so a profile fits on one line and the last line needs no newline.
 */
#include "parse_ctx.h"

#include <stdlib.h>
#include <string.h>

#include "grammar.h"
#include "access.h"
#include "suggest.h"

/* Beyond this many syntax errors a file is not worth reading further. */
enum { PARSE_MAX_ERRORS = 50 };

static struct loc tok_loc(const struct token *t) { return t->loc; }

static struct loc span(struct loc a, struct loc b)
{
	if (b.off + b.len > a.off)
		a.len = b.off + b.len - a.off;
	return a;
}

static const char *const parse_access_names[] = {
	"read", "read-metadata", "write", "create", "delete", "exec", "connect", "unix", "mach", NULL,
};

/* Every keyword, accesses included: a misspelt one lexes as a name. */
static const char *const parse_keywords[] = {
	"cage", "import", "param", "list", "profile", "extends", "allow", "deny", "protect",
	"mode", "env", "keep", "set", "unset", "private", "limit", "read", "read-metadata", "write",
	"create", "delete", "exec", "connect", "unix", "mach", NULL,
};

static bool parse_is_access(int kind)
{
	switch (kind) {
	case TK_READ: case TK_READ_METADATA: case TK_WRITE: case TK_CREATE: case TK_DELETE:
	case TK_EXEC: case TK_CONNECT: case TK_UNIX: case TK_MACH:
		return true;
	default:
		return false;
	}
}

static const char *parse_suggest(const struct token *t, const char *const *names)
{
	struct suggest sg;
	suggest_init(&sg, t->text, t->len);
	suggest_offer_all(&sg, names);
	return suggest_best(&sg);
}

void parse_syntax_error(struct parse_ctx *ctx, const struct token *t, uint64_t expected)
{
	ctx->syntax_errors++;
	if (ctx->syntax_errors > PARSE_MAX_ERRORS)
		return;
	char want[256] = "";
	size_t n = 0, count = 0;
	for (int i = 1; i < 64; i++)
		if (expected & ((uint64_t)1 << i))
			count++;
	if (count > 0 && count <= 6) {
		size_t k = 0;
		for (int i = 1; i < 64; i++) {
			if (!(expected & ((uint64_t)1 << i)))
				continue;
			int w = snprintf(want + n, sizeof(want) - n, "%s%s",
					 k == 0 ? "; expected " : k + 1 == count ? " or " : ", ",
					 lex_token_name(i));
			if (w > 0 && (size_t)w < sizeof(want) - n)
				n += (size_t)w;
			k++;
		}
	}
	struct loc l = tok_loc(t);
	const struct token *p0 = &ctx->prev[0], *p1 = &ctx->prev[1];
	bool effect_before = p1->kind == TK_ALLOW || p1->kind == TK_DENY || p1->kind == TK_PROTECT;
	bool word_after = t->kind == TK_IDENT || t->kind == TK_STRING;
	/* A name where an access belongs, followed by the rule's targets:
	 * "allow rread x" and "allow read wirte x" (where 'wirte' first reads
	 * as the target and the parser only stumbles on 'x'). The caret goes on
	 * the misspelt access, not on the word after it. */
	if (p0->kind == TK_IDENT && (effect_before || (parse_is_access(p1->kind) && word_after))) {
		const char *near = parse_suggest(p0, parse_access_names);
		char hint[96];
		if (effect_before ? t->kind != TK_NL && t->kind != TK_COMMA : near != NULL) {
			diag_add(ctx->diags, DIAG_ERROR, p0->loc, "syntax",
				 "'%.*s' is not an access (read, read-metadata, write, create, delete, "
				 "exec, connect, unix, mach)%s",
				 (int)(p0->len > 40 ? 40 : p0->len), p0->text,
				 suggest_say(near, hint, sizeof hint));
			return;
		}
	}
	if (t->kind == 0 || (t->kind == TK_NL && t->len == 0 && l.off >= ctx->file->len)) {
		/* Point at the end of the last line with text, not past it. */
		const char *txt = ctx->file->text;
		size_t end = ctx->file->len;
		while (end > 0 && (txt[end - 1] == '\n' || txt[end - 1] == '\r' ||
				   txt[end - 1] == ' ' || txt[end - 1] == '\t'))
			end--;
		size_t ls = end;
		while (ls > 0 && txt[ls - 1] != '\n')
			ls--;
		uint32_t line = 1;
		for (size_t i = 0; i < ls; i++)
			line += txt[i] == '\n';
		struct loc e = { .file = ctx->file, .line = line,
				 .col = diag_display_col(txt, ls, end), .off = (uint32_t)end };
		struct diag *d = diag_add(ctx->diags, DIAG_ERROR, e, "syntax",
					  "unexpected end of file%s", want);
		if (ctx->brace_depth > 0)
			diag_note(ctx->diags, d, ctx->open_brace, "this '{' is never closed");
	} else if (t->kind == TK_NL) {
		diag_add(ctx->diags, DIAG_ERROR, l, "syntax", "unexpected end of line%s", want);
	} else if (t->kind == TK_IDENT && parse_suggest(t, parse_keywords)) {
		diag_add(ctx->diags, DIAG_ERROR, l, "syntax", "unexpected name '%.*s'; did you mean '%s'?",
			 (int)(t->len > 40 ? 40 : t->len), t->text, parse_suggest(t, parse_keywords));
	} else if (t->kind == TK_IDENT || t->kind == TK_STRING || t->kind == TK_INT) {
		diag_add(ctx->diags, DIAG_ERROR, l, "syntax", "unexpected %s '%.*s'%s",
			 lex_token_name(t->kind), (int)(t->len > 40 ? 40 : t->len), t->text, want);
	} else {
		diag_add(ctx->diags, DIAG_ERROR, l, "syntax", "unexpected %s%s",
			 lex_token_name(t->kind), want);
	}
}

void parse_stack_overflow(struct parse_ctx *ctx)
{
	ctx->overflow = true;
}

void parse_append(struct ast_nodelist *l, struct ast_node *n)
{
	if (!n)
		return;
	if (l->tail)
		l->tail->next = n;
	else
		l->head = n;
	l->tail = n;
}

void parse_add(struct parse_ctx *ctx, struct ast_node *n)
{
	parse_append(&ctx->items, n);
}

struct ast_str *parse_str(struct parse_ctx *ctx, const struct token *t, bool ident)
{
	struct ast_str *s = arena_alloc(ctx->arena, sizeof(*s));
	if (t->kind == TK_STRING) {
		s->text = t->value ? t->value : "";
		s->len = t->value_len;
	} else {
		s->text = arena_strndup(ctx->arena, t->text, t->len);
		s->len = t->len;
	}
	s->loc = t->loc;
	s->is_ident = ident;
	return s;
}

static struct ast_node *node(struct parse_ctx *ctx, enum ast_kind kind, const struct token *k)
{
	struct ast_node *n = arena_alloc(ctx->arena, sizeof(*n));
	n->kind = kind;
	n->loc = k->loc;
	return n;
}

struct ast_node *parse_version(struct parse_ctx *ctx, const struct token *k, const struct token *num)
{
	struct ast_node *n = node(ctx, AST_VERSION, k);
	n->u.version.number = parse_str(ctx, num, false);
	return n;
}

struct ast_node *parse_import(struct parse_ctx *ctx, const struct token *k, const struct token *s)
{
	struct ast_node *n = node(ctx, AST_IMPORT, k);
	n->u.import.path = parse_str(ctx, s, false);
	return n;
}

struct ast_node *parse_param(struct parse_ctx *ctx, const struct token *k, const struct token *name,
			     const struct token *type, struct ast_str *deflt)
{
	struct ast_node *n = node(ctx, AST_PARAM, k);
	n->u.param.name = parse_str(ctx, name, true);
	n->u.param.type = parse_str(ctx, type, true);
	n->u.param.deflt = deflt;
	return n;
}

struct ast_node *parse_list(struct parse_ctx *ctx, const struct token *k, const struct token *name,
			    struct ast_str *items)
{
	struct ast_node *n = node(ctx, AST_LIST, k);
	n->u.list.name = parse_str(ctx, name, true);
	n->u.list.items = items;
	return n;
}

struct ast_node *parse_profile(struct parse_ctx *ctx, const struct token *k, const struct token *name,
			       const struct token *parent, struct ast_node *body)
{
	struct ast_node *n = node(ctx, AST_PROFILE, k);
	n->u.profile.name = parse_str(ctx, name, true);
	n->u.profile.parent = parent ? parse_str(ctx, parent, true) : NULL;
	n->u.profile.body = body;
	return n;
}

void parse_access_add(struct parse_ctx *ctx, struct parse_access *a, const struct token *k)
{
	uint32_t bits = 0;
	switch (k->kind) {
	case TK_READ: bits = IR_A_KW_READ; break;
	case TK_READ_METADATA: bits = IR_A_READ_META; break;
	case TK_WRITE: bits = IR_A_KW_WRITE; break;
	case TK_CREATE: bits = IR_A_CREATE; break;
	case TK_DELETE: bits = IR_A_DELETE; break;
	case TK_EXEC: bits = IR_A_EXEC; break;
	case TK_CONNECT: bits = IR_A_CONNECT; break;
	case TK_UNIX: bits = IR_A_UNIX; break;
	case TK_MACH: bits = IR_A_MACH; break;
	}
	if ((a->mask & bits) == bits && bits)
		diag_add(ctx->diags, DIAG_WARNING, k->loc, "duplicate-access",
			 "access '%.*s' is already named in this rule", (int)k->len, k->text);
	a->mask |= bits;
	if (!a->any)
		a->first = k->loc;
	a->last = k->loc;
	a->any = true;
}

struct ast_node *parse_rule(struct parse_ctx *ctx, const struct token *effect,
			    const struct parse_access *acc, struct ast_str *targets,
			    const struct token *except, struct ast_str *excepts)
{
	struct ast_node *n = node(ctx, AST_RULE, effect);
	n->u.rule.effect = effect->kind == TK_ALLOW  ? AST_ALLOW
			 : effect->kind == TK_DENY   ? AST_DENY
						     : AST_PROTECT;
	n->u.rule.access = acc->mask;
	n->u.rule.access_loc = acc->any ? span(acc->first, acc->last) : effect->loc;
	n->u.rule.targets = targets;
	n->u.rule.excepts = excepts;
	if (except) {
		n->u.rule.except_loc = except->loc;
		/* Only a protect has something to leave out: an allow or deny
		 * is already overridden by the rules after it. */
		if (n->u.rule.effect != AST_PROTECT)
			diag_add(ctx->diags, DIAG_ERROR, except->loc, "syntax",
				 "'except' belongs to 'protect' only; write a later rule instead");
	}
	return n;
}

struct ast_node *parse_mode(struct parse_ctx *ctx, const struct token *k, const struct token *v)
{
	struct ast_node *n = node(ctx, AST_MODE, k);
	n->u.mode.value = parse_str(ctx, v, true);
	return n;
}

struct ast_node *parse_names(struct parse_ctx *ctx, enum ast_kind kind, const struct token *k,
			     struct ast_str *names)
{
	struct ast_node *n = node(ctx, kind, k);
	n->u.names.names = names;
	return n;
}

struct ast_node *parse_env_set(struct parse_ctx *ctx, const struct token *k, const struct token *name,
			       const struct token *value)
{
	struct ast_node *n = node(ctx, AST_ENV_SET, k);
	n->u.env_set.name = parse_str(ctx, name, true);
	n->u.env_set.value = parse_str(ctx, value, false);
	return n;
}

struct ast_node *parse_limit(struct parse_ctx *ctx, const struct token *k, const struct token *what,
			     const struct token *number, struct ast_str *words)
{
	struct ast_node *n = node(ctx, AST_LIMIT, k);
	n->u.limit.what = parse_str(ctx, what, true);
	n->u.limit.number = parse_str(ctx, number, false);
	n->u.limit.words = words;
	return n;
}

static void feed(void *parser, struct parse_ctx *ctx, const struct token *t)
{
	if (t->kind == TK_LBRACE) {
		ctx->brace_depth++;
		ctx->open_brace = t->loc;
	} else if (t->kind == TK_RBRACE && ctx->brace_depth > 0) {
		ctx->brace_depth--;
	}
	cage_parser(parser, t->kind, *t, ctx);
	ctx->prev[1] = ctx->prev[0];
	ctx->prev[0] = *t;
}

struct ast_file *parse_file(const struct src_file *f, struct arena *a, struct diag_list *diags)
{
	struct parse_ctx ctx = { .arena = a, .diags = diags, .file = f };
	struct ast_file *af = arena_alloc(a, sizeof(*af));
	af->src = f;
	void *parser = cage_parserAlloc(malloc);
	if (!parser) {
		fputs("cage: out of memory\n", stderr);
		abort();
	}
	struct lexer lx;
	lex_init(&lx, f, a, diags);
	int prev = TK_NL; /* as if a line had just ended */
	size_t lex_errors = 0;
	for (;;) {
		struct token t;
		lex_next(&lx, &t);
		if (t.kind == LEX_ERROR) {
			if (++lex_errors > PARSE_MAX_ERRORS)
				break;
			continue;
		}
		if (t.kind == LEX_COMMENT)
			continue;
		if (t.kind == TK_NL && (prev == TK_COMMA || prev == TK_NL || prev == TK_EXCEPT))
			continue;
		if (t.kind == LEX_EOF || t.kind == TK_RBRACE) {
			if (prev != TK_NL) {
				struct token nl = { .kind = TK_NL, .text = t.text, .loc = t.loc };
				nl.loc.len = 0;
				feed(parser, &ctx, &nl);
			}
		}
		if (t.kind == LEX_EOF)
			break;
		feed(parser, &ctx, &t);
		prev = t.kind;
		if (ctx.syntax_errors > PARSE_MAX_ERRORS || ctx.overflow)
			break;
	}
	struct token eof = { .kind = 0, .text = f->text + f->len, .loc = { .file = f, .line = lx.line } };
	cage_parser(parser, 0, eof, &ctx);
	cage_parserFree(parser, free);
	if (ctx.syntax_errors > PARSE_MAX_ERRORS || lex_errors > PARSE_MAX_ERRORS) {
		struct loc l = { .file = f };
		diag_add(diags, DIAG_ERROR, l, "syntax", "too many errors; stopped reading this file");
	}
	if (ctx.overflow) {
		struct loc l = { .file = f };
		diag_add(diags, DIAG_ERROR, l, "syntax", "statement too deeply nested");
	}
	af->items = ctx.items.head;
	af->syntax_errors = ctx.syntax_errors + lex_errors;
	return af;
}
