/*
 * lint_cli.c - the `cagec lint` and `cagec explain` subcommands: argument
 * handling and output; the checks themselves are lint_policy().
 *
 * lint checks many files in one process (pre-commit passes every staged
 * .cage file at once). A param without a default would make a policy
 * impossible to check without -D, so lint gives each missing one a
 * placeholder ("/<name>" for paths): the rules that use it are still
 * checked against everything else. explain does not: a placeholder would
 * give a verdict for a path that is not the user's, so a missing param is
 * the same error as when compiling.
 *
 * Exit status: 0 no errors, 1 some file has an error finding (or does not
 * compile), 2 usage or I/O error.
 */
#include "cli.h"
#include "lint_int.h"
#include "suggest.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { EXIT_POLICY = 1, EXIT_USAGE = 2 };

static const char lint_usage[] =
	"usage: cagec lint [options] FILE...\n"
	"\n"
	"Checks .cage policies for unsafe rule order, exposed secrets, symlink escapes\n"
	"and other mistakes. Exit status 1 when any error remains.\n"
	"\n"
	"  --format FMT       text (default), json or sarif (SARIF 2.1.0)\n"
	"  -W no-ID           do not report check ID\n"
	"  -W ID=SEVERITY     report ID as error, warning or note (or off)\n"
	"  -Werror            treat warnings as errors\n"
	"  --resolve          check granted paths against the filesystem (symlinks,\n"
	"                     hard links)\n"
	"  --root DIR         with --resolve: the tree to check instead of /\n"
	"  --target T         linux or macos: the platform to lint for (its stdlib\n"
	"                     modules and its limits; default: this host), or all:\n"
	"                     this host's modules, both platforms' limits\n"
	"  --list-checks      print every check id with its default severity\n"
	"  -D, --define N=V   give param N the value V\n"
	"  -I, --include DIR  search DIR for imports before the standard library\n"
	"      --profile NAME the selected profile (default: the last one in FILE)\n"
	"      --home DIR     what '~' means (default: $HOME)\n"
	"      --stdlib DIR   where 'import \"std/...\"' is found\n"
	"      --color=WHEN   auto (default), always, never\n";

static const char explain_usage[] =
	"usage: cagec explain [options] FILE ACCESS TARGET\n"
	"       cagec explain [options] FILE rename|link SRC DST\n"
	"\n"
	"Says whether the selected profile allows ACCESS (read, read-metadata, write,\n"
	"create, delete, exec, unix, mach, connect) to TARGET (a path, ~/... allowed,\n"
	"or host[:port], port 443 by default), which rule decides and which rules it\n"
	"overrode. read and write mean what they mean in a rule (read + read-metadata;\n"
	"write + create + delete): allowed only when every part is. rename and link ask\n"
	"whether SRC may be moved or hard-linked to DST: delete at SRC (link: SRC not\n"
	"pinned), create at DST, and DST may not grant more than SRC.\n"
	"Exit status 0 allowed, 1 denied, 2 usage or policy error (a param without a\n"
	"default must be given with -D, as when compiling).\n"
	"\n"
	"  -D, -I, --profile, --target, --home, --stdlib as for cagec\n";

/* Loads `file`; missing params get placeholders (see the top comment). */
static struct cage_policy *load(const char *file, cage_options *opts)
{
	struct cage_policy *pol = cage_load_file(file, opts);
	if (!pol || pol->io_error || !pol->ir)
		return pol;
	size_t missing = 0;
	for (size_t i = 0; i < pol->ir->nparams; i++)
		if (!pol->ir->params[i].value && !pol->ir->params[i].from_define)
			missing++;
	if (!missing)
		return pol;
	/* Same options plus -D for each missing param; the caller's options
	 * are not changed. */
	cage_options *o2 = cage_options_new();
	if (!o2)
		return pol;
	for (size_t i = 0; i < opts->ndefines; i++)
		cage_options_define(o2, opts->defines[i]);
	for (size_t i = 0; i < opts->nincludes; i++)
		cage_options_include(o2, opts->includes[i]);
	cage_options_stdlib(o2, opts->stdlib);
	cage_options_home(o2, opts->home);
	cage_options_profile(o2, opts->profile);
	o2->has_target = opts->has_target;
	o2->target = opts->target;
	for (size_t i = 0; i < pol->ir->nparams; i++) {
		const struct ir_param *p = &pol->ir->params[i];
		if (p->value || p->from_define)
			continue;
		char def[512];
		switch (p->type) {
		case IR_P_PATH: snprintf(def, sizeof def, "%s=/<%s>", p->name, p->name); break;
		case IR_P_HOST: snprintf(def, sizeof def, "%s=%s.invalid", p->name, p->name); break;
		case IR_P_PORT: snprintf(def, sizeof def, "%s=1", p->name); break;
		default: snprintf(def, sizeof def, "%s=%s", p->name, p->name); break;
		}
		cage_options_define(o2, def);
	}
	struct cage_policy *again = cage_load_file(file, o2);
	cage_options_free(o2);
	if (!again)
		return pol;
	cage_policy_free(pol);
	return again;
}

/* Options both subcommands share. Returns 1 handled, 0 not ours, -1 error. */
int lint_main(int argc, char **argv)
{
	enum { O_FORMAT = 256, O_RESOLVE, O_ROOT, O_LIST, O_COLOR };
	static const struct option longopts[] = {
		CLI_POLICY_LONGOPTS,
		{ "format", required_argument, NULL, O_FORMAT },
		{ "resolve", no_argument, NULL, O_RESOLVE },
		{ "root", required_argument, NULL, O_ROOT },
		{ "list-checks", no_argument, NULL, O_LIST },
		{ "color", required_argument, NULL, O_COLOR },
		{ "colour", required_argument, NULL, O_COLOR },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	cage_options *opts = cage_options_new();
	struct lint_override *ov = calloc((size_t)argc + 1, sizeof *ov);
	struct cage_policy **pols = NULL;
	if (!opts || !ov) {
		fputs("cagec: out of memory\n", stderr);
		cage_options_free(opts);
		free(ov);
		return EXIT_USAGE;
	}
	struct lint_opts lo = { .ov = ov };
	const char *format = "text", *color = "auto";
	int c, status = EXIT_USAGE;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":D:I:W:h", longopts, NULL)) != -1) {
		/* --target all: both platforms' limits, the host's modules (the
		 * rules lint checks are the user's, the same on both). */
		if (c == 't' && strcmp(optarg, "all") == 0) {
			lo.targets = LINT_T_MACOS | LINT_T_LINUX;
			continue;
		}
		if (c == 't' && strcmp(optarg, "linux") && strcmp(optarg, "macos")) {
			static const char *const targets[] = { "linux", "macos", "all", NULL };
			char hint[160];
			fprintf(stderr, "cagec: --target wants linux, macos or all, not '%s'%s\n", optarg,
				suggest_say_among(optarg, targets, hint, sizeof hint));
			goto out;
		}
		if (c == 't')
			lo.targets = 0; /* the target's own limits */
		int r = cli_policy_opt(c, optarg, opts);
		if (r < 0)
			goto out;
		if (r > 0)
			continue;
		switch (c) {
		case 'W': {
			bool werror = false;
			char err[256];
			if (lint_parse_w(optarg, &ov[lo.nov], &werror, err, sizeof err)) {
				lo.nov++;
			} else if (werror) {
				lo.werror = true;
			} else {
				fprintf(stderr, "cagec: -W %s: %s\n", optarg, err);
				goto out;
			}
			break;
		}
		case O_FORMAT:
			if (strcmp(optarg, "text") && strcmp(optarg, "json") && strcmp(optarg, "sarif")) {
				struct suggest sg;
				suggest_init(&sg, optarg, strlen(optarg));
				suggest_offer_all(&sg, (const char *const[]){ "text", "json", "sarif", NULL });
				char hint[96];
				fprintf(stderr, "cagec: --format wants text, json or sarif, not '%s'%s\n",
					optarg, suggest_say(suggest_best(&sg), hint, sizeof hint));
				goto out;
			}
			format = optarg;
			break;
		case O_RESOLVE: lo.resolve = true; break;
		case O_ROOT:
			lo.root = optarg;
			lo.resolve = true;
			break;
		case O_LIST: {
			size_t n;
			const struct lint_check *ck = lint_checks(&n);
			for (size_t i = 0; i < n; i++)
				printf("%-22s %-8s %s\n", ck[i].id, diag_sev_name(ck[i].sev), ck[i].summary);
			status = 0;
			goto out;
		}
		case O_COLOR:
			if (!cli_color_valid(optarg)) {
				fputs("cagec: --color wants auto, always or never\n", stderr);
				goto out;
			}
			color = optarg;
			break;
		case 'h':
			fputs(lint_usage, stdout);
			status = 0;
			goto out;
		case ':':
			fprintf(stderr, "cagec: option '%s' needs a value\n", argv[optind - 1]);
			goto out;
		default:
			fprintf(stderr, "cagec: unknown option '%s' (see cagec lint --help)\n",
				argv[optind - 1]);
			goto out;
		}
	}
	if (optind >= argc) {
		fputs("cagec: lint: no policy file given (see cagec lint --help)\n", stderr);
		goto out;
	}
	bool text = strcmp(format, "text") == 0, col = cli_want_color(color, STDOUT_FILENO);
	size_t n = (size_t)(argc - optind);
	pols = calloc(n, sizeof *pols);
	if (!pols) {
		fputs("cagec: out of memory\n", stderr);
		goto out;
	}
	status = 0;
	for (size_t i = 0; i < n; i++) {
		struct cage_policy *pol = load(argv[optind + (int)i], opts);
		if (!pol) {
			fputs("cagec: out of memory\n", stderr);
			status = EXIT_USAGE;
			break;
		}
		if (pol->io_error) {
			/* On standard error in every format; SARIF also records it
			 * as a failed execution (lint_write_sarif). */
			diag_render(stderr, &pol->diags, col);
			status = EXIT_USAGE;
			if (text)
				cage_policy_free(pol);
			else
				pols[i] = pol;
			continue;
		}
		lo.stdlib = opts->stdlib; /* --stdlib, parsed by now */
		lint_policy(pol, &lo);
		if (pol->diags.errors && status == 0)
			status = EXIT_POLICY;
		if (text) {
			diag_render(stdout, &pol->diags, col);
			cage_policy_free(pol);
		} else {
			pols[i] = pol;
		}
	}
	if (!text) {
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (pols[i])
				pols[k++] = pols[i];
		if (strcmp(format, "json") == 0)
			lint_write_json(stdout, pols, k);
		else
			lint_write_sarif(stdout, pols, k);
		for (size_t i = 0; i < k; i++)
			cage_policy_free(pols[i]);
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		perror("cagec: standard output");
		status = EXIT_USAGE;
	}
out:
	free(pols);
	free(ov);
	cage_options_free(opts);
	return status;
}

int explain_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_POLICY_LONGOPTS,
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	cage_options *opts = cage_options_new();
	if (!opts) {
		fputs("cagec: out of memory\n", stderr);
		return EXIT_USAGE;
	}
	int c, status = EXIT_USAGE;
	opterr = 0;
	optind = 1;
	/* options may follow the operands; "--" ends them */
	while ((c = getopt_long(argc, argv, ":D:I:h", longopts, NULL)) != -1) {
		int r = cli_policy_opt(c, optarg, opts);
		if (r < 0)
			goto out;
		if (r > 0)
			continue;
		if (c == 'h') {
			fputs(explain_usage, stdout);
			status = 0;
			goto out;
		}
		if (c == ':')
			fprintf(stderr, "cagec: option '%s' needs a value\n", argv[optind - 1]);
		else
			fprintf(stderr, "cagec: unknown option '%s' (see cagec explain --help)\n",
				argv[optind - 1]);
		goto out;
	}
	bool move = argc - optind == 4 && (strcmp(argv[optind + 1], "rename") == 0 ||
					   strcmp(argv[optind + 1], "link") == 0);
	if (argc - optind != 3 && !move) {
		fputs("cagec: explain wants FILE ACCESS TARGET, or FILE rename|link SRC DST; got",
		      stderr);
		for (int i = optind; i < argc; i++)
			fprintf(stderr, " '%s'", argv[i]);
		fputs(argc == optind ? " nothing (see cagec explain --help)\n"
				     : " (see cagec explain --help)\n", stderr);
		goto out;
	}
	struct cage_policy *pol = cage_load_file(argv[optind], opts);
	if (!pol) {
		fputs("cagec: out of memory\n", stderr);
		goto out;
	}
	diag_render(stderr, &pol->diags, cli_want_color("auto", STDERR_FILENO));
	const char *err = NULL;
	if (!pol->diags.errors) {
		bool allowed;
		bool ok = move ? lint_explain_move(stdout, pol, argv[optind + 1], argv[optind + 2],
						   argv[optind + 3], &allowed, &err)
			       : lint_explain(stdout, pol, argv[optind + 1], argv[optind + 2],
					      &allowed, &err);
		if (ok) {
			status = allowed ? 0 : EXIT_POLICY;
		} else {
			fprintf(stderr, "cagec: explain: %s\n", err);
		}
	}
	cage_policy_free(pol);
out:
	cage_options_free(opts);
	return status;
}
