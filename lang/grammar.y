/*
 * grammar.y - the .cage grammar; Lemon turns this into gen/grammar.c.
 *
 * Statements end at a newline (the driver in parse.c drops newlines after a
 * comma so long lists can wrap, and supplies one before '}' and at end of
 * file). Error recovery is per statement: `error NL` resynchronises at the
 * next line, and resets Lemon's error counter so that the next bad line is
 * reported too - one run reports every syntax error in a file.
 */
%name cage_parser
%token_prefix TK_
%token_type { struct token }
%extra_argument { struct parse_ctx *ctx }
%start_symbol file

%include {
#include <assert.h>
#include <string.h>

#include "parse_ctx.h"
}

/* Tokens own no memory (strings live in the arena); the destructor only
 * marks Lemon's arguments as used so the generated code stays -Werror clean. */
%default_destructor { (void)ctx; (void)yypminor; }

%syntax_error {
	(void)yymajor;
	/* The terminals this state can shift, for "expected ..." - only when the
	 * state has no default reduction, since then the set is complete. */
	uint64_t expected = 0;
	YYACTIONTYPE st = yypParser->yytos->stateno;
	if (st <= YY_MAX_SHIFT && yy_default[st] == YY_ERROR_ACTION) {
		for (int i = 1; i < YYNTOKEN && i < 64; i++) {
			int j = yy_shift_ofst[st] + i;
			if (j >= 0 && j < (int)YY_NLOOKAHEAD && yy_lookahead[j] == i)
				expected |= (uint64_t)1 << i;
		}
	}
	parse_syntax_error(ctx, &TOKEN, expected);
}

%stack_overflow {
	parse_stack_overflow(ctx);
}

%token NL IDENT INT STRING COMMA COLON EQ LBRACE RBRACE.
%token CAGE IMPORT PARAM LIST PROFILE EXTENDS.
%token ALLOW DENY PROTECT EXCEPT MODE ENV KEEP SET UNSET PRIVATE.
%token READ READ_METADATA WRITE CREATE DELETE EXEC CONNECT UNIX MACH.
%token LIMIT.

file ::= stmts.

stmts ::= .
stmts ::= stmts stmt.

stmt ::= NL.
stmt ::= CAGE(K) INT(N) NL. { parse_add(ctx, parse_version(ctx, &K, &N)); }
stmt ::= IMPORT(K) STRING(S) NL. { parse_add(ctx, parse_import(ctx, &K, &S)); }
stmt ::= PARAM(K) IDENT(N) COLON IDENT(T) NL. { parse_add(ctx, parse_param(ctx, &K, &N, &T, NULL)); }
stmt ::= PARAM(K) IDENT(N) COLON IDENT(T) EQ value(V) NL. { parse_add(ctx, parse_param(ctx, &K, &N, &T, V)); }
stmt ::= LIST(K) IDENT(N) EQ words(W) NL. { parse_add(ctx, parse_list(ctx, &K, &N, W.head)); }
stmt ::= PROFILE(K) IDENT(N) LBRACE body(B) RBRACE NL. { parse_add(ctx, parse_profile(ctx, &K, &N, NULL, B.head)); }
stmt ::= PROFILE(K) IDENT(N) EXTENDS IDENT(P) LBRACE body(B) RBRACE NL. { parse_add(ctx, parse_profile(ctx, &K, &N, &P, B.head)); }
stmt ::= item(I) NL. { parse_add(ctx, I); }
stmt ::= error NL. { yypParser->yyerrcnt = -1; /* resynchronised: report the next error too */ }

%type body { struct ast_nodelist }
body(A) ::= . { A.head = A.tail = NULL; }
body(A) ::= body(B) NL. { A = B; }
body(A) ::= body(B) item(I) NL. { A = B; parse_append(&A, I); }
body(A) ::= body(B) error NL. { A = B; yypParser->yyerrcnt = -1; /* resynchronised: report the next error too */ }

%type item { struct ast_node * }
item(A) ::= effect(E) accesses(X) words(W). { A = parse_rule(ctx, &E, &X, W.head, NULL, NULL); }
item(A) ::= effect(E) accesses(X) words(W) EXCEPT(K) words(V). { A = parse_rule(ctx, &E, &X, W.head, &K, V.head); }
item(A) ::= MODE(K) IDENT(V). { A = parse_mode(ctx, &K, &V); }
item(A) ::= ENV(K) KEEP idents(L). { A = parse_names(ctx, AST_ENV_KEEP, &K, L.head); }
item(A) ::= ENV(K) UNSET idents(L). { A = parse_names(ctx, AST_ENV_UNSET, &K, L.head); }
item(A) ::= ENV(K) SET IDENT(N) EQ STRING(V). { A = parse_env_set(ctx, &K, &N, &V); }
item(A) ::= PRIVATE(K) idents(L). { A = parse_names(ctx, AST_PRIVATE, &K, L.head); }
/* `limit WHAT N [UNIT] [best-effort]`: the words after the number are
 * names, checked by the resolver, so a misspelt unit gets a hint. */
item(A) ::= LIMIT(K) IDENT(W) INT(N). { A = parse_limit(ctx, &K, &W, &N, NULL); }
item(A) ::= LIMIT(K) IDENT(W) INT(N) idents(L). { A = parse_limit(ctx, &K, &W, &N, L.head); }

%type effect { struct token }
effect(A) ::= ALLOW(K). { A = K; }
effect(A) ::= DENY(K). { A = K; }
effect(A) ::= PROTECT(K). { A = K; }

%type accesses { struct parse_access }
accesses(A) ::= . { memset(&A, 0, sizeof(A)); }
accesses(A) ::= accesses(B) access(K). { A = B; parse_access_add(ctx, &A, &K); }

%type access { struct token }
access(A) ::= READ(K). { A = K; }
access(A) ::= READ_METADATA(K). { A = K; }
access(A) ::= WRITE(K). { A = K; }
access(A) ::= CREATE(K). { A = K; }
access(A) ::= DELETE(K). { A = K; }
access(A) ::= EXEC(K). { A = K; }
access(A) ::= CONNECT(K). { A = K; }
access(A) ::= UNIX(K). { A = K; }
access(A) ::= MACH(K). { A = K; }

%type words { struct ast_strlist }
words(A) ::= word(W). { A.head = A.tail = W; }
words(A) ::= words(B) COMMA word(W). { A = B; A.tail->next = W; A.tail = W; }

%type word { struct ast_str * }
word(A) ::= STRING(S). { A = parse_str(ctx, &S, false); }
word(A) ::= IDENT(S). { A = parse_str(ctx, &S, true); }

%type value { struct ast_str * }
value(A) ::= STRING(S). { A = parse_str(ctx, &S, false); }
value(A) ::= INT(S). { A = parse_str(ctx, &S, false); }

%type idents { struct ast_strlist }
idents(A) ::= IDENT(W). { A.head = A.tail = parse_str(ctx, &W, true); }
idents(A) ::= idents(B) IDENT(W). { A = B; struct ast_str *s = parse_str(ctx, &W, true); A.tail->next = s; A.tail = s; }
