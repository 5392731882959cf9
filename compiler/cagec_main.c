/*
 * cagec_main.c - the cagec program: argument handling and output only.
 * Everything it does is a call into libcage (cage.h), so an agent host that
 * embeds the library gets exactly the compiler's behaviour.
 *
 * Exit status: 0 success, 1 the policy has errors, 2 usage or I/O error.
 */
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cage.h"
#include "cli.h"
#include "sg.h"
#include "cpt.h"
#include "emit.h"
#include "lint.h"
#include "outfile.h"
#include "fmt.h"
#include "ir.h"
#include "stdlib_dir.h"
#include "suggest.h"

enum { EXIT_POLICY = 1, EXIT_USAGE = 2 };

static const char usage_text[] =
	"usage: cagec FILE [-o OUT] [-D NAME=VALUE]... [-I DIR]... [--profile NAME]\n"
	"             [--target linux|macos] [--emit BACKEND] [--home DIR] [--stdlib DIR]\n"
	"             [--color=WHEN]\n"
	"       cagec lint [options] FILE...     (see cagec lint --help)\n"
	"       cagec explain [options] FILE ACCESS TARGET\n"
	"       cagec explain [options] FILE rename|link SRC DST\n"
	"       cagec monitor-report LOG [--detailed]\n"
	"       cagec suggest LOG [--into POLICY [--write]] [options]\n"
	"       cagec fmt [--check | -w] FILE...  (see cagec fmt --help)\n"
	"       cagec --dump-table TABLE.cpt\n"
	"       cagec --version | --help\n"
	"\n"
	"Compiles the .cage policy FILE and writes the selected profile with a backend.\n"
	"\n"
	"  -o, --output OUT     write to OUT (atomically) instead of standard output\n"
	"%s      --emit BACKEND   what to write (default: sbpl, or ir with --target linux);\n"
	"                       backends in this build:%s\n"
	"      --color=WHEN     colour diagnostics: auto (default), always, never\n"
	"      --dump-table T   check the proxy table T and print it as text\n"
	"  -V, --version        print the version and exit\n"
	"  -h, --help           print this help and exit\n"
	"\n"
	"This host is %s; an sbpl output implies --target macos.\n"
	"--stdlib (default: %s, %s)\n"
	"Exit status: 0 success, 1 the policy has errors, 2 usage or I/O error.\n";

static void print_usage(FILE *out)
{
	/* The options cagec shares with cagerun come from their one table. */
	char *shared = NULL;
	size_t slen = 0;
	FILE *mem = open_memstream(&shared, &slen);
	if (mem) {
		const struct cli_opt *const tabs[] = { cli_policy_opts };
		cli_print_options(mem, tabs, 1, CLI_CAGEC);
		fclose(mem);
	}
	char names[256] = "";
	size_t n = 0;
	for (size_t i = 0; cage_backend_name(i) && n < sizeof(names) - 32; i++)
		n += (size_t)snprintf(names + n, sizeof(names) - n, " %s", cage_backend_name(i));
	char std[PATH_MAX];
	enum stdlib_origin origin = stdlib_dir_default(std, sizeof std);
	fprintf(out, usage_text, shared ? shared : "", names, ir_target_name(IR_TARGET_HOST), std,
		stdlib_origin_name(origin));
	free(shared);
}

/* --dump-table: a table that does not load is an error in the input (1), one
 * that cannot be read at all an I/O error (2). */
static int dump_table(const char *path)
{
	struct cpt_table t;
	struct cpt_error e;
	if (!cpt_open(&t, path, &e)) {
		fprintf(stderr, "cagec: %s: %s%s\n", path,
			e.code == CPT_E_IO ? "" : "invalid proxy table: ", e.msg);
		return e.code == CPT_E_IO ? EXIT_USAGE : EXIT_POLICY;
	}
	bool ok = cpt_dump(&t, stdout);
	cpt_close(&t);
	if (!ok) {
		perror("cagec: standard output");
		return EXIT_USAGE;
	}
	return 0;
}

/* Without --emit: what the output's name says (.sb, .cpt), else a
 * Seatbelt profile, unless the target was set to Linux, which has none. */
static const char *default_backend(const char *out, bool linux)
{
	if (out) {
		size_t n = strlen(out);
		if (n > 3 && strcmp(out + n - 3, ".sb") == 0 && emit_find("sbpl"))
			return "sbpl";
		if (n > 4 && strcmp(out + n - 4, ".cpt") == 0 && emit_find("table"))
			return "table";
	}
	return emit_find("sbpl") && !linux ? "sbpl" : "ir";
}

/* A Seatbelt profile can only send traffic to the proxy; the host rules
 * live in the proxy table, written next to it (OUT.sb -> OUT.cpt). Only
 * for outputs named *.sb, so the name of the second file is predictable. */
static int write_table_beside(cage_policy *pol, const char *sb_path, const char *src)
{
	size_t n = strlen(sb_path);
	if (n <= 3 || strcmp(sb_path + n - 3, ".sb") != 0 || !cage_has_host_rules(pol))
		return 0;
	size_t stem = n - 3;
	char *path = malloc(stem + 5);
	if (!path) {
		fputs("cagec: out of memory\n", stderr);
		return EXIT_USAGE;
	}
	memcpy(path, sb_path, stem);
	memcpy(path + stem, ".cpt", 5);
	int status = 0;
	if (!emit_find("table")) {
		fprintf(stderr, "cagec: note: %s has connect rules, which the proxy enforces; "
				"this build has no proxy table backend yet, so %s is NOT produced\n",
			src, path);
		free(path);
		return 0;
	}
	struct outfile of;
	char ferr[512];
	const char *err = NULL;
	if (!outfile_open(&of, path, ferr, sizeof(ferr))) {
		fprintf(stderr, "cagec: %s\n", ferr);
		status = EXIT_USAGE;
	} else if (!cage_emit(pol, "table", of.fp, &err)) {
		fprintf(stderr, "cagec: %s: %s\n", src, err);
		outfile_abort(&of);
		status = EXIT_POLICY;
	} else if (!outfile_commit(&of, ferr, sizeof(ferr))) {
		fprintf(stderr, "cagec: %s\n", ferr);
		status = EXIT_USAGE;
	}
	free(path);
	return status;
}

int main(int argc, char **argv)
{
	/* Subcommands live in the library; they take their own options. */
	if (argc > 1 && strcmp(argv[1], "lint") == 0)
		return lint_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "explain") == 0)
		return explain_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "suggest") == 0)
		return suggest_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "monitor-report") == 0)
		return monitor_report_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "fmt") == 0)
		return fmt_command(argc - 1, argv + 1, stdout, stderr);
	static const struct option longopts[] = {
		CLI_POLICY_LONGOPTS,
		{ "output", required_argument, NULL, 'o' },
		{ "emit", required_argument, NULL, 'e' },
		{ "color", required_argument, NULL, 'c' },
		{ "colour", required_argument, NULL, 'c' },
		{ "dump-table", required_argument, NULL, 'T' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	cage_options *opts = cage_options_new();
	if (!opts) {
		fputs("cagec: out of memory\n", stderr);
		return EXIT_USAGE;
	}
	const char *output = NULL, *backend = NULL, *color = "auto", *dump = NULL, *target = NULL;
	int c, status = EXIT_USAGE;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:D:I:Vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': output = optarg; break;
		case 'D':
		case 'I':
		case 'p':
		case 'H':
		case 'S':
		case 't':
			if (cli_policy_opt(c, optarg, opts) < 0)
				goto out;
			if (c == 't')
				target = optarg;
			break;
		case 'e': backend = optarg; break;
		case 'T': dump = optarg; break;
		case 'c':
			if (!cli_color_valid(optarg)) {
				fprintf(stderr, "cagec: --color wants auto, always or never\n");
				goto out;
			}
			color = optarg;
			break;
		case 'V':
			printf("cagec %s\n", cage_version());
			status = 0;
			goto out;
		case 'h':
			print_usage(stdout);
			status = 0;
			goto out;
		case ':':
			fprintf(stderr, "cagec: option '%s' needs a value\n", argv[optind - 1]);
			goto out;
		default:
			fprintf(stderr, "cagec: unknown option '%s' (see cagec --help)\n", argv[optind - 1]);
			goto out;
		}
	}
	if (dump) {
		if (optind < argc) {
			fprintf(stderr, "cagec: --dump-table reads a table, not a policy ('%s' is extra)\n",
				argv[optind]);
			goto out;
		}
		status = dump_table(dump);
		goto out;
	}
	if (optind >= argc) {
		fputs("cagec: no policy file given (see cagec --help)\n", stderr);
		goto out;
	}
	if (optind + 1 < argc) {
		fprintf(stderr, "cagec: one policy file at a time ('%s' is extra)\n", argv[optind + 1]);
		goto out;
	}
	bool linux = target && strcmp(target, "linux") == 0;
	if (!backend)
		backend = default_backend(output, linux);
	const struct emit_backend *be = emit_find(backend);
	if (!be) {
		struct suggest sg;
		char hint[160];
		suggest_init(&sg, backend, strlen(backend));
		for (size_t i = 0; cage_backend_name(i); i++)
			suggest_offer(&sg, cage_backend_name(i));
		fprintf(stderr, "cagec: unknown backend '%s'%s (see cagec --help)\n", backend,
			suggest_say(suggest_best(&sg), hint, sizeof hint));
		goto out;
	}
	/* A Seatbelt profile only means something on macOS, so asking for one
	 * chooses macOS's stdlib modules; asking for one for Linux is a
	 * mistake worth stopping before anything is written. */
	if (strcmp(backend, "sbpl") == 0) {
		if (linux) {
			fputs("cagec: --target linux cannot be compiled to a Seatbelt profile (sbpl is "
			      "macOS only); use --emit ir or --emit table, or --target macos\n",
			      stderr);
			goto out;
		}
		if (!target)
			cage_options_target(opts, "macos");
	}
	if (be->binary && !output && isatty(STDOUT_FILENO)) {
		fprintf(stderr, "cagec: the %s backend writes binary data; use -o FILE\n", backend);
		goto out;
	}

	cage_policy *pol = cage_load_file(argv[optind], opts);
	if (!pol) {
		fputs("cagec: out of memory\n", stderr);
		goto out;
	}
	cage_print_diagnostics(pol, stderr, cli_want_color(color, STDERR_FILENO));
	if (cage_error_count(pol) > 0) {
		struct cage_diagnostic d;
		status = cage_diagnostic_get(pol, 0, &d) && strcmp(d.id ? d.id : "", "io") == 0
				 ? EXIT_USAGE : EXIT_POLICY;
		cage_policy_free(pol);
		goto out;
	}
	const char *err = NULL;
	char ferr[512];
	if (output) {
		struct outfile of;
		if (!outfile_open(&of, output, ferr, sizeof(ferr))) {
			fprintf(stderr, "cagec: %s\n", ferr);
		} else if (!cage_emit(pol, backend, of.fp, &err)) {
			fprintf(stderr, "cagec: %s: %s\n", argv[optind], err);
			outfile_abort(&of);
			status = EXIT_POLICY;
		} else if (!outfile_commit(&of, ferr, sizeof(ferr))) {
			fprintf(stderr, "cagec: %s\n", ferr);
		} else {
			status = strcmp(backend, "sbpl") == 0 ? write_table_beside(pol, output, argv[optind])
							      : 0;
		}
	} else if (!cage_emit(pol, backend, stdout, &err)) {
		fprintf(stderr, "cagec: %s: %s\n", argv[optind], err);
		status = EXIT_POLICY;
	} else if (fflush(stdout) != 0 || ferror(stdout)) {
		perror("cagec: standard output");
	} else {
		status = 0;
	}
	cage_policy_free(pol);
out:
	cage_options_free(opts);
	return status;
}
