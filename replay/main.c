/*
 * main.c - sufs-replay: run an operation script (or a random workload) on
 * an image, in a chosen write mode, counting what reaches the disk, and
 * optionally stopping all writes at a chosen point as a crash would.
 *
 * The run, and where each exit status comes from:
 *   1. the command line                                      (EXIT_USAGE)
 *   2. the script, then the image wrapped in the counting,
 *      logging, crashing device (iodev.c), then the file
 *      system on it, in the write mode asked for             (EXIT_SCRIPT, EXIT_OPEN)
 *   3. one line after the other (script.c); after each, did
 *      the device reach its crash point?                     (EXIT_CRASHED, EXIT_SCRIPT, EXIT_IO)
 *   4. sync, read the counters, close                        (EXIT_CRASHED, EXIT_IO)
 * A crash abandons the file system (sufs_abandon: what was only in memory
 * is lost, as in a real crash).  A bad line or a refused operation closes
 * it cleanly, keeping what the lines before did.
 */
#include "config.h"

#include "crash.h"
#include "sufs_test.h"
#include "iodev.h"
#include "random.h"
#include "script.h"
#include "util.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Exit statuses (common/util.h; man/sufs-replay.8, EXIT STATUS), by what
 * they mean to sufs-replay.  EXIT_FILE: the script cannot be read, or the
 * I/O log cannot be made or written. */
enum {
	EXIT_OPEN = EXIT_IMAGE,    /* the image cannot be opened */
	EXIT_SCRIPT = EXIT_FAILED, /* a line is bad, an operation did not give the
				      result the line asked for, or a signal stopped
				      the run (written back) */
};

struct args {
	const char *image;
	const char *script;       /* NULL with --random */
	const char *iolog;
	unsigned mode;
	int mode_given;           /* --mode: else the image's default (sufs-tune -o) */
	int stats, json;
	int crash_kind;           /* 0, 'w' (--crash-after-write) or 'e' (--crash-after-epoch) */
	uint64_t crash_at;
	int random;
	uint64_t random_ops, seed;
	int print_script;
	int fixed_time;           /* SOURCE_DATE_EPOCH */
	int64_t time_sec;
	uint64_t cache_bytes;     /* --cache, 0: the library's default */
	int direct;               /* --direct: the image opened with O_DIRECT */
	unsigned broken_rule;     /* --break-rule */
	int crash_check;          /* --crash-check or --crash-state */
	int bgfsck;               /* --bgfsck */
	uint32_t throttle_kib;    /* --throttle */
	struct crash_opts crash;
};

/* --bgfsck: the background check, in a thread of its own. */
struct bg {
	pthread_t thread;
	int started;
	struct sufs_fs *fs;
	struct sufs_check_opts opts;
	struct sufs_check_result result;
	int rc;
	double seconds;
};

static void *bg_run(void *arg)
{
	struct bg *bg = arg;
	double start = now_seconds();

	bg->rc = sufs_check_background(bg->fs, &bg->opts, &bg->result);
	bg->seconds = now_seconds() - start;
	return NULL;
}

static int bg_start(struct bg *bg, struct sufs_fs *fs, uint32_t throttle_kib)
{
	int rc;

	memset(bg, 0, sizeof(*bg));
	bg->fs = fs;
	bg->opts.throttle_kib = throttle_kib;
	rc = pthread_create(&bg->thread, NULL, bg_run, bg);
	if (rc) {
		errmsg("cannot start the background check: %s", strerror(rc));
		return -1;
	}
	bg->started = 1;
	return 0;
}

/* Wait for the background check; -1 when it could not run. */
static int bg_finish(struct bg *bg, const char *image)
{
	if (!bg->started)
		return 0;
	pthread_join(bg->thread, NULL);
	bg->started = 0;
	if (bg->rc) {
		errmsg("background check of %s: %s", shown(image), sufs_strerror(bg->rc));
		return -1;
	}
	if (bg->result.status & SUFS_EXIT_UNCORRECTED)
		warnmsg("background check of %s: %u problem%s worse than a leak; the file "
			"system is marked for a full check", shown(image), bg->result.nonleaks,
			bg->result.nonleaks == 1 ? "" : "s");
	return 0;
}

/* What --stats reports. */
struct report {
	unsigned mode;
	uint64_t operations;
	struct iodev_counts dev;
	struct sufs_stats lib;
	uint64_t peak_dirty_bytes, peak_cache_bytes;
	uint64_t line_epochs_max;   /* the most epochs one line (or the final sync) took */
	uint32_t block_size;
	double seconds;
	int crashed;
	enum phase { PHASE_OPEN, PHASE_LINES, PHASE_CLOSE } crash_phase;
	uint64_t crash_line;      /* in PHASE_LINES: the line that was running */
	struct bg bg;             /* --bgfsck */
};

/* Where a crash happened: the key of --json, and the words of messages. */
static const char *const phase_key[] = { "open", "script", "close" };
static const char *const phase_text[] = {
	"while opening the image", "at line", "in the final write-back",
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [options] IMAGE SCRIPT|-\n"
		"       %s [options] --random N [--seed S] [--print-script] IMAGE\n"
		"Run the operations of SCRIPT (- for standard input), one a line, on the sufs\n"
		"image IMAGE; or a random workload of N operations.\n"
		"\n"
		"      --mode MODE              write mode: softdep, sync or async (default:\n"
		"                               the image's default mode, softdep unless set)\n"
		"      --stats                  print counters after the run\n"
		"      --json                   print them as a JSON object (implies --stats)\n"
		"      --iolog FILE             record every block write and barrier in FILE\n"
		"      --crash-after-write N    let N block writes reach the image, then stop\n"
		"                               writing and exit as a crash would\n"
		"      --crash-after-epoch N    the same after N barriers\n"
		"      --random N               run N random operations instead of a script\n"
		"      --seed S                 the random workload's seed (default 0)\n"
		"      --print-script           print the random workload, do not run it\n"
		"      --cache SIZE             the buffer cache's size (K, M suffixes)\n"
		"      --direct                 write the image with O_DIRECT, past the page\n"
		"                               cache (to time the device's own writes)\n"
		"      --bgfsck                 run a background check (fsck.sufs -b) in a second\n"
		"                               thread while the workload runs; with --crash-check,\n"
		"                               repair each crash state with it\n"
		"      --throttle KIB           the background check reads at most KIB KiB/s\n"
		"\n"
		"      --crash-check[=all|sample:N]  check every crash state of the run (or N\n"
		"                               drawn at random): only leaks, repaired by a\n"
		"                               leak-only check, and nothing made durable lost\n"
		"      --crash-state E:SUBSET   check that one state (as a violation names it)\n"
		"      --subsets N              random subsets of each epoch of more than 10\n"
		"                               writes (default 8)\n"
		"      --jobs N                 check in N processes (default: the usable CPUs)\n"
		"      --crash-dir DIR          save the images of violations there (default .)\n"
		"      --max-reports N          report and save at most N violations (default 3)\n"
		"      --break-rule N           break ordering rule 1 to 4 (to test the test)\n"
		"  -q, --quiet                  with --crash-check, print nothing unless violated\n"
		"  -h, --help                   print this help and exit\n"
		"  -V, --version                print the version and exit\n"
		"\n"
		"SOURCE_DATE_EPOCH in the environment fixes the clock of new timestamps.\n"
		"Exit status: 0 done, 1 usage error, 2 the image cannot be opened, 4 a line is\n"
		"bad or did not do what it asked, 8 the script or I/O log cannot be used, 16\n"
		"I/O error, 32 crashed as asked, 64 a crash state broke the promise.\n"
		"See sufs-replay(8).\n",
		prog, prog);
}

/* Say what is wrong with the command line (if fmt is not NULL), point to
 * --help, and exit. */
static void usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

static void usage_error(const char *fmt, ...)
{
	va_list ap;

	if (fmt) {
		fprintf(stderr, "%s: ", prog);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
	fprintf(stderr, "Try '%s --help' for more information.\n", prog);
	exit(EXIT_USAGE);
}

static uint64_t opt_count(const char *opt, const char *arg)
{
	uint64_t v;

	if (parse_u64(arg, &v))
		usage_error("invalid value for %s: '%s' (a whole number)", opt, arg);
	return v;
}

static void parse_source_date_epoch(struct args *a)
{
	int rc = source_date_epoch(&a->time_sec);

	if (rc < 0)
		exit(EXIT_USAGE);
	a->fixed_time = rc;
}

/* The CPUs this process may run on (as nproc(1) counts them: taskset and
 * cpusets narrow it), or those online if the kernel will not say. */
static long usable_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	return sysconf(_SC_NPROCESSORS_ONLN);
}

static void parse_args(int argc, char **argv, struct args *a)
{
	enum {
		OPT_MODE = 256, OPT_STATS, OPT_JSON, OPT_IOLOG, OPT_CRASH_WRITE,
		OPT_CRASH_EPOCH, OPT_RANDOM, OPT_SEED, OPT_PRINT, OPT_CACHE, OPT_CHECK,
		OPT_STATE, OPT_SUBSETS, OPT_JOBS, OPT_DIR, OPT_REPORTS, OPT_BREAK, OPT_BGFSCK,
		OPT_THROTTLE, OPT_DIRECT,
	};
	static const struct option longopts[] = {
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "stats", no_argument, NULL, OPT_STATS },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "iolog", required_argument, NULL, OPT_IOLOG },
		{ "crash-after-write", required_argument, NULL, OPT_CRASH_WRITE },
		{ "crash-after-epoch", required_argument, NULL, OPT_CRASH_EPOCH },
		{ "random", required_argument, NULL, OPT_RANDOM },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "print-script", no_argument, NULL, OPT_PRINT },
		{ "cache", required_argument, NULL, OPT_CACHE },
		{ "crash-check", optional_argument, NULL, OPT_CHECK },
		{ "crash-state", required_argument, NULL, OPT_STATE },
		{ "subsets", required_argument, NULL, OPT_SUBSETS },
		{ "jobs", required_argument, NULL, OPT_JOBS },
		{ "crash-dir", required_argument, NULL, OPT_DIR },
		{ "max-reports", required_argument, NULL, OPT_REPORTS },
		{ "break-rule", required_argument, NULL, OPT_BREAK },
		{ "bgfsck", no_argument, NULL, OPT_BGFSCK },
		{ "throttle", required_argument, NULL, OPT_THROTTLE },
		{ "direct", no_argument, NULL, OPT_DIRECT },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct crash_opts *k = &a->crash;
	long cpus = usable_cpus();
	int c, have_seed = 0, have_mode = 0, check_only = 0, quiet = 0, stats = 0;
	uint64_t v;

	memset(a, 0, sizeof(*a));
	a->mode = SUFS_MODE_SOFTDEP;
	k->subsets = 8;
	k->jobs = cpus > 0 ? (unsigned)cpus : 1;
	k->save_dir = ".";
	k->max_reports = 3;
	while ((c = getopt_long(argc, argv, "hVq", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_MODE:
			if (sufs_mode_parse(optarg, &a->mode))
				usage_error("invalid mode '%s': softdep, sync or async", optarg);
			have_mode = 1;
			a->mode_given = 1;
			break;
		case OPT_STATS:
			a->stats = stats = 1;
			break;
		case OPT_JSON:
			a->stats = a->json = 1;
			break;
		case OPT_IOLOG:
			a->iolog = optarg;
			break;
		case OPT_CRASH_WRITE:
		case OPT_CRASH_EPOCH:
			if (a->crash_kind)
				usage_error("only one crash point may be given");
			a->crash_kind = c == OPT_CRASH_WRITE ? 'w' : 'e';
			a->crash_at = opt_count(c == OPT_CRASH_WRITE ? "--crash-after-write"
						: "--crash-after-epoch", optarg);
			break;
		case OPT_RANDOM:
			a->random = 1;
			a->random_ops = opt_count("--random", optarg);
			break;
		case OPT_SEED:
			have_seed = 1;
			a->seed = opt_count("--seed", optarg);
			break;
		case OPT_PRINT:
			a->print_script = 1;
			break;
		case OPT_CACHE:
			if (sufs_parse_size(optarg, &a->cache_bytes) || !a->cache_bytes)
				usage_error("invalid cache size '%s'", optarg);
			break;
		case OPT_CHECK:
			if (a->crash_check)
				usage_error("--crash-check and --crash-state go alone");
			a->crash_check = 1;
			if (!optarg || strcmp(optarg, "all") == 0) {
				k->which = CRASH_ALL;
			} else if (strncmp(optarg, "sample:", 7) == 0 &&
				   !parse_u64(optarg + 7, &k->sample) && k->sample) {
				k->which = CRASH_SAMPLE;
			} else {
				usage_error("invalid value for --crash-check: '%s' (all or sample:N)",
					    optarg);
			}
			break;
		case OPT_STATE:
			if (a->crash_check)
				usage_error("--crash-check and --crash-state go alone");
			a->crash_check = 1;
			if (!crash_state_valid(optarg))
				usage_error("invalid value for --crash-state: '%s' (EPOCH:SUBSET as "
					    "a violation names it, or final)", optarg);
			k->which = CRASH_ONE;
			k->state = optarg;
			break;
		case OPT_SUBSETS:
			check_only = 1;
			k->subsets = (unsigned)opt_count("--subsets", optarg);
			break;
		case OPT_JOBS:
			check_only = 1;
			v = opt_count("--jobs", optarg);
			if (v < 1 || v > 256)
				usage_error("invalid value for --jobs: '%s' (1 to 256)", optarg);
			k->jobs = (unsigned)v;
			break;
		case OPT_DIR:
			check_only = 1;
			k->save_dir = optarg;
			break;
		case OPT_REPORTS:
			check_only = 1;
			k->max_reports = (unsigned)opt_count("--max-reports", optarg);
			break;
		case OPT_BGFSCK:
			a->bgfsck = 1;
			break;
		case OPT_DIRECT:
			a->direct = 1;
			break;
		case OPT_THROTTLE:
			v = opt_count("--throttle", optarg);
			if (v < 1 || v > UINT32_MAX)
				usage_error("invalid value for --throttle: '%s' (KiB per second)",
					    optarg);
			a->throttle_kib = (uint32_t)v;
			break;
		case OPT_BREAK:
			v = opt_count("--break-rule", optarg);
			if (v < 1 || v > 4)
				usage_error("invalid value for --break-rule: '%s' (1 to 4)", optarg);
			a->broken_rule = (unsigned)v;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_OK);
		case 'V':
			print_version();
			exit(EXIT_OK);
		default:
			usage_error(NULL);
		}
	}
	if (have_seed && !a->random)
		usage_error("--seed goes with --random");
	if (a->print_script && !a->random)
		usage_error("--print-script goes with --random");
	if (a->print_script && (have_mode || a->cache_bytes || a->stats || a->iolog || a->crash_kind))
		usage_error("--print-script runs nothing: no --mode, --cache, --stats, --iolog or "
			    "crash point");
	if (a->crash_check && (stats || a->iolog || a->crash_kind || a->print_script))
		usage_error("--crash-check runs alone: no --stats, --iolog, --print-script or "
			    "crash point (--json prints its summary)");
	if (a->direct && (a->crash_check || a->print_script))
		usage_error("--direct goes with a workload run on the image: --crash-check "
			    "writes its states in memory, --print-script runs nothing");
	if (quiet && !a->crash_check)
		usage_error("--quiet goes with --crash-check");
	if (check_only && !a->crash_check)
		usage_error("--subsets, --jobs, --crash-dir and --max-reports go with --crash-check");
	if (a->broken_rule && !a->crash_check)
		usage_error("--break-rule goes with --crash-check: on a plain run it would only "
			    "write an image that a crash could corrupt");
	if (a->throttle_kib && !a->bgfsck)
		usage_error("--throttle goes with --bgfsck");
	if (a->throttle_kib && a->crash_check)
		usage_error("--throttle goes with a workload run whole: --crash-check runs "
			    "the background check on each state at full speed");
	if (a->bgfsck && (a->crash_kind || a->print_script))
		usage_error("--bgfsck goes with a workload run whole, or with --crash-check");
	/* (with --crash-check, that refusal of each state is what is tested) */
	if (a->bgfsck && !a->crash_check && a->mode != SUFS_MODE_SOFTDEP)
		usage_error("--bgfsck goes with --mode softdep: the background check refuses "
			    "an image written in another mode");
	if (optind >= argc)
		usage_error("no image given");
	a->image = argv[optind++];
	if (!a->random) {
		if (optind >= argc)
			usage_error("no script given (- reads standard input)");
		a->script = argv[optind++];
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	parse_source_date_epoch(a);
	k->image = a->image;
	k->script = a->script;
	k->random_ops = a->random_ops;
	k->seed = a->seed;
	k->mode = a->mode;
	k->broken_rule = a->broken_rule;
	k->cache_bytes = a->cache_bytes;
	k->fixed_time = a->fixed_time;
	k->time_sec = a->time_sec;
	k->json = a->json;
	k->quiet = quiet;
	k->bgfsck = a->bgfsck;
}

/* ---- the report ------------------------------------------------------------------ */

static void ratio(FILE *f, const char *label, uint64_t num, uint64_t den, int json)
{
	if (json) {
		fprintf(f, "  \"%s\": ", label);
		if (den)
			fprintf(f, "%.6f,\n", (double)num / (double)den);
		else
			fputs("null,\n", f);
	} else {
		fprintf(f, "%-28s", label);
		if (den)
			fprintf(f, "%.4f\n", (double)num / (double)den);
		else
			fputs("-\n", f);
	}
}

static void print_report(const struct report *r, int json)
{
	const struct {
		const char *text, *key;
		uint64_t v;
	} rows[] = {
		{ "Operations:", "operations", r->operations },
		{ "Block writes:", "block_writes", r->dev.blocks },
		{ "Write calls:", "write_calls", r->dev.writes },
		{ "Barriers:", "barriers", r->dev.barriers },
		{ "Epochs:", "epochs", r->lib.epochs },
		{ "Most epochs of a line:", "line_epochs_max", r->line_epochs_max },
		{ "Block reads:", "block_reads", r->lib.block_reads },
		{ "Updates created:", "updates", r->lib.updates },
		{ "Updates merged:", "merged", r->lib.merged },
		{ "Updates undone:", "undone", r->lib.undone },
		{ "Waits made:", "waits", r->lib.waits },
		{ "Files forgotten:", "forgotten", r->lib.forgotten },
		{ "Moves settled:", "moves_settled", r->lib.moves_settled },
		{ "Peak pending updates:", "peak_pending", r->lib.peak_pending },
		{ "Peak dependency bytes:", "peak_dep_bytes", r->lib.peak_dep_bytes },
		{ "Peak undo bytes:", "peak_undo_bytes", r->lib.peak_undo_bytes },
		{ "Peak dirty bytes:", "peak_dirty_bytes", r->peak_dirty_bytes },
		{ "Peak cache bytes:", "peak_cache_bytes", r->peak_cache_bytes },
	};
	size_t i;
	const char *mode = sufs_mode_name(r->mode);

	if (json) {
		printf("{\n  \"mode\": ");
		json_str(stdout, mode, strlen(mode));
		printf(",\n  \"block_size\": %u,\n", r->block_size);
		for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
			printf("  \"%s\": %llu,\n", rows[i].key, (unsigned long long)rows[i].v);
		ratio(stdout, "dep_per_cache", r->lib.peak_dep_bytes, r->peak_cache_bytes, 1);
		ratio(stdout, "undo_per_dirty", r->lib.peak_undo_bytes, r->peak_dirty_bytes, 1);
		printf("  \"seconds\": %.6f,\n", r->seconds);
		if (r->bg.fs)
			printf("  \"bgfsck\": {\"status\": %d, \"problems\": %u, \"leaks\": %u, "
			       "\"fixed\": %u, \"seconds\": %.6f},\n", r->bg.result.status,
			       r->bg.result.problems, r->bg.result.leaks, r->bg.result.fixed,
			       r->bg.seconds);
		else
			printf("  \"bgfsck\": null,\n");
		printf("  \"crashed\": %s,\n", r->crashed ? "true" : "false");
		if (r->crashed)
			printf("  \"crash_phase\": \"%s\",\n", phase_key[r->crash_phase]);
		else
			printf("  \"crash_phase\": null,\n");
		if (r->crashed && r->crash_phase == PHASE_LINES)
			printf("  \"crash_line\": %llu\n}\n", (unsigned long long)r->crash_line);
		else
			printf("  \"crash_line\": null\n}\n");
		return;
	}
	printf("%-28s%s\n", "Write mode:", mode);
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		printf("%-28s%llu\n", rows[i].text, (unsigned long long)rows[i].v);
	ratio(stdout, "Dependency bytes / cache:", r->lib.peak_dep_bytes, r->peak_cache_bytes, 0);
	ratio(stdout, "Undo bytes / dirty bytes:", r->lib.peak_undo_bytes, r->peak_dirty_bytes, 0);
	printf("%-28s%.3f s\n", "Wall time:", r->seconds);
	if (r->bg.fs)
		printf("%-28sexit %d, %u problems (%u leaks), %u fixed, %.3f s\n",
		       "Background check:", r->bg.result.status, r->bg.result.problems,
		       r->bg.result.leaks, r->bg.result.fixed, r->bg.seconds);
	if (r->crashed && r->crash_phase == PHASE_LINES)
		printf("%-28s%s %llu\n", "Crashed:", phase_text[r->crash_phase],
		       (unsigned long long)r->crash_line);
	else if (r->crashed)
		printf("%-28s%s\n", "Crashed:", phase_text[r->crash_phase]);
}

/* After each line: the peaks the library does not keep. */
static void sample(struct sufs_fs *fs, struct report *r)
{
	struct sufs_stats st;

	sufs_get_stats(fs, &st);
	if (st.epochs - r->lib.epochs > r->line_epochs_max)
		r->line_epochs_max = st.epochs - r->lib.epochs;
	if (st.dirty_blocks * r->block_size > r->peak_dirty_bytes)
		r->peak_dirty_bytes = st.dirty_blocks * r->block_size;
	if (st.cache_bytes > r->peak_cache_bytes)
		r->peak_cache_bytes = st.cache_bytes;
	r->lib = st;
}

/* ---- running --------------------------------------------------------------------- */

/* The lines to run: a script file, or the random workload. */
struct source {
	const char *name;         /* for messages */
	FILE *f;
	struct random_gen *gen;
	uint64_t left;            /* random lines still to come */
	char *buf;
	size_t cap;
	int error;                /* errno of a failed read */
	int nul;                  /* the line read has a NUL byte in it */
};

/* The next line, or NULL at the end (or on a read error: see ->error). */
static const char *next_line(struct source *s)
{
	ssize_t len;

	if (s->gen) {
		const char *line;
		if (!s->left)
			return NULL;
		s->left--;
		line = random_next(s->gen);
		if (!line)
			s->error = ENOMEM;
		return line;
	}
	len = getline(&s->buf, &s->cap, s->f);
	if (len < 0) {
		if (ferror(s->f))
			s->error = errno ? errno : EIO;
		return NULL;
	}
	s->nul = strlen(s->buf) != (size_t)len; /* the parser would see less */
	return s->buf;
}

/* How many lines a script file has from where it is read on, for the
 * progress bar's total (0, an unknown total, when it is not a regular file
 * or cannot be read).  Called before the first line is read; read with
 * pread(), so the stream's position does not move. */
static uint64_t count_lines(FILE *f)
{
	char buf[65536];
	struct stat st;
	uint64_t lines = 0;
	ssize_t n;
	char last = '\n';
	int fd = fileno(f);
	off_t off = lseek(fd, 0, SEEK_CUR);

	if (off < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode))
		return 0;
	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		const char *p = buf, *end = buf + n;
		while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
			lines++;
			p++;
		}
		last = buf[n - 1];
		off += n;
	}
	if (n < 0)
		return 0;
	return lines + (last != '\n');
}

/* --print-script: the workload's lines, read-only, nothing run. */
static int print_script(const struct args *a)
{
	struct random_gen *gen;
	struct sufs_fs *fs;
	uint64_t i;
	int rc = sufs_open(a->image, 0, &fs);

	if (rc) {
		errmsg("cannot open %s: %s", shown(a->image), open_error(a->image, rc));
		return EXIT_OPEN;
	}
	rc = random_open(fs, a->seed, &gen);
	if (rc) {
		errmsg("reading the tree of %s: %s", shown(a->image), sufs_strerror(rc));
		sufs_close(fs);
		return EXIT_IO;
	}
	printf("# sufs-replay --random %llu --seed %llu\n", (unsigned long long)a->random_ops,
	       (unsigned long long)a->seed);
	for (i = 0; i < a->random_ops; i++) {
		const char *line = random_next(gen);
		if (!line) {
			errmsg("%s", strerror(ENOMEM));
			rc = EXIT_IO;
			break;
		}
		puts(line);
	}
	random_close(gen);
	sufs_close(fs);
	if (fflush(stdout) || ferror(stdout)) {
		errmsg("writing the script: %s", strerror(errno));
		return EXIT_FILE;
	}
	return rc;
}

/*
 * The crash point was reached: lose what is in memory (fs, if open, is
 * abandoned) and say where: in which phase, at which line of the script.
 */
static int crashed(struct sufs_fs *fs, struct iodev *io, struct report *r, enum phase phase,
		   uint64_t line)
{
	char at[64] = "";

	if (fs) {
		sample(fs, r);
		sufs_abandon(fs);
	}
	r->crashed = 1;
	r->crash_phase = phase;
	r->crash_line = line;
	iodev_counts(io, &r->dev);
	if (phase == PHASE_LINES)
		snprintf(at, sizeof(at), " %llu", (unsigned long long)line);
	errmsg("crashed as asked, after %llu block writes and %llu barriers, %s%s",
	       (unsigned long long)r->dev.blocks, (unsigned long long)r->dev.barriers,
	       phase_text[phase], at);
	return EXIT_CRASHED;
}

static int has_crashed(struct iodev *io)
{
	struct iodev_counts c;

	iodev_counts(io, &c);
	return c.crashed;
}

static int log_failed(struct iodev *io, const struct args *a)
{
	struct iodev_counts c;

	iodev_counts(io, &c);
	if (c.log_error)
		errmsg("writing the I/O log %s: %s", shown(a->iolog), strerror(c.log_error));
	return c.log_error != 0;
}

/*
 * SIGINT, SIGTERM and SIGHUP stop a run between two lines: the lines run
 * so far are written back as at the end of a script (the close), so that
 * an interrupt costs nothing done; the lines after it are not run, and the
 * message says from which line on.  Only SIGKILL makes a crash of it.
 */
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static void catch_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* Run every line; returns an exit status.  fs is closed or abandoned. */
static int run_lines(struct sufs_fs *fs, struct iodev *io, struct source *src,
		     const struct args *a, struct report *r)
{
	struct script_ctx ctx;
	struct progress pb;
	char err[1024];
	const char *line;
	uint64_t lineno = 0;
	int st = SCRIPT_OK, rc, logerr = 0;

	script_ctx_init(&ctx, fs, (uint32_t)getuid(), (uint32_t)getgid());
	if (a->bgfsck && bg_start(&r->bg, fs, a->throttle_kib)) {
		sufs_close(fs);
		return EXIT_IO;
	}
	progress_start(&pb, "Running", src->gen ? src->left : 0);
	if (pb.active && !src->gen)
		pb.total = count_lines(src->f);
	catch_signals();
	while ((line = next_line(src)) != NULL) {
		lineno++;
		if (stop_signal) {
			progress_stop(&pb);
			errmsg("%s: stopped before line %llu; the lines run are written back",
			       strsignal(stop_signal), (unsigned long long)lineno);
			break;
		}
		if (src->nul) {
			errmsg("%s:%llu: a NUL byte in the line", shown(src->name),
			       (unsigned long long)lineno);
			st = SCRIPT_BAD_LINE;
			break;
		}
		sufs_lock(fs);
		st = script_exec_line(fs, line, &ctx, err, sizeof(err));
		sufs_unlock(fs);
		r->operations = ctx.operations;
		if (has_crashed(io) || (logerr = log_failed(io, a)) != 0)
			break;
		if (st != SCRIPT_OK) {
			errmsg("%s:%llu: %s", shown(src->name), (unsigned long long)lineno, err);
			break;
		}
		sufs_lock(fs);
		sample(fs, r);
		sufs_unlock(fs);
		progress_update(&pb, lineno);
	}
	if (line || src->error || has_crashed(io))
		progress_stop(&pb);
	else
		progress_end(&pb);
	/* the background check ends before anything closes the file system */
	if (bg_finish(&r->bg, a->image) && line == NULL && !src->error) {
		sufs_close(fs);
		return EXIT_IO;
	}
	if (has_crashed(io))
		return crashed(fs, io, r, PHASE_LINES, lineno);
	if (line && (logerr || (st == SCRIPT_FAILED && ctx.rc == -EIO))) {
		sufs_abandon(fs);
		return EXIT_IO;
	}
	if (line) {
		rc = sufs_close(fs);
		if (rc && !has_crashed(io))
			errmsg("closing %s: %s", shown(a->image), sufs_strerror(rc));
		return EXIT_SCRIPT;
	}
	if (src->error) {
		errmsg("reading %s: %s", shown(src->name), strerror(src->error));
		sufs_close(fs);
		return src->error == ENOMEM ? EXIT_IO : EXIT_FILE;
	}

	/* the final write-back: synced first so that the counters cover it */
	rc = sufs_sync(fs);
	if (has_crashed(io))
		return crashed(fs, io, r, PHASE_CLOSE, 0);
	if (!rc)
		sample(fs, r);
	if (rc || log_failed(io, a)) {
		if (rc == -ENOMEM)
			errmsg("writing back to %s: %s: all was written, but not always "
			       "in order; the image is marked for a full check (fsck.sufs -f)",
			       shown(a->image), sufs_strerror(rc));
		else if (rc)
			errmsg("writing back to %s: %s", shown(a->image), sufs_strerror(rc));
		sufs_abandon(fs);
		return EXIT_IO;
	}
	rc = sufs_close(fs);
	if (has_crashed(io))
		return crashed(NULL, io, r, PHASE_CLOSE, 0);
	if (rc) {
		errmsg("closing %s: %s", shown(a->image), sufs_strerror(rc));
		return EXIT_IO;
	}
	iodev_counts(io, &r->dev);
	if (a->crash_kind)
		warnmsg("the run ended after %llu block writes and %llu barriers, "
			"before the crash point", (unsigned long long)r->dev.blocks,
			(unsigned long long)r->dev.barriers);
	return EXIT_OK;
}

/* Open the lines to run; returns 0 or an exit status. */
static int open_source(const struct args *a, struct source *src)
{
	memset(src, 0, sizeof(*src));
	if (a->random) {
		src->name = "random";
		src->left = a->random_ops;
		return 0;
	}
	if (strcmp(a->script, "-") == 0) {
		src->name = "stdin";
		src->f = stdin;
		return 0;
	}
	src->name = a->script;
	src->f = fopen(a->script, "re");
	if (!src->f) {
		errmsg("cannot read %s: %s", shown(a->script), strerror(errno));
		return EXIT_FILE;
	}
	return 0;
}

static void close_source(struct source *src)
{
	if (src->f && src->f != stdin)
		fclose(src->f);
	random_close(src->gen);
	free(src->buf);
}

/* Do the two paths name one file (a script of "-" names none)? */
static int same_file(const char *path, const char *other)
{
	struct stat a, b;

	if (!other || strcmp(other, "-") == 0 || stat(path, &a) || stat(other, &b))
		return 0;
	return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Open the image through the wrapper device; returns 0 or an exit status. */
static int open_fs(const struct args *a, struct iodev **io, struct sufs_fs **fs)
{
	int rc = iodev_open(a->image, a->direct ? SUFS_DEV_DIRECT : 0, io);

	if (rc == -EINVAL && a->direct) {
		errmsg("cannot open %s with O_DIRECT (--direct): the file system it is on has "
		       "no direct I/O", shown(a->image));
		return EXIT_OPEN;
	}
	if (rc) {
		errmsg("cannot open %s: %s", shown(a->image), sufs_strerror(rc));
		return EXIT_OPEN;
	}
	if (a->crash_kind == 'w')
		iodev_crash_after_blocks(*io, a->crash_at);
	else if (a->crash_kind == 'e')
		iodev_crash_after_barriers(*io, a->crash_at);
	if (a->iolog) {
		/* the log is made empty first: never over the inputs */
		if (same_file(a->iolog, a->image) || same_file(a->iolog, a->script)) {
			errmsg("the I/O log %s is the %s: it would be overwritten", shown(a->iolog),
			       same_file(a->iolog, a->image) ? "image" : "script");
			return EXIT_USAGE;
		}
		rc = iodev_log_open(*io, a->iolog);
		if (rc) {
			errmsg("cannot create the I/O log %s: %s", shown(a->iolog), sufs_strerror(rc));
			return EXIT_FILE;
		}
	}
	/* opening writes: the superblock goes out marked in use */
	rc = sufs_open_dev(iodev_dev(*io), SUFS_OPEN_RDWR, 0, fs);
	if (rc) {
		*fs = NULL;
		if (has_crashed(*io))
			return EXIT_CRASHED;
		errmsg("cannot open %s: %s", shown(a->image), open_error(a->image, rc));
		return EXIT_OPEN;
	}
	rc = sufs_set_mode(*fs, a->mode_given ? a->mode : sufs_get_super(*fs)->default_mode);
	if (!rc)
		rc = sufs_test_break_rule(*fs, a->broken_rule);
	if (rc) {
		if (has_crashed(*io))
			return EXIT_CRASHED;
		errmsg("cannot set the write mode of %s: %s", shown(a->image), sufs_strerror(rc));
		sufs_abandon(*fs);
		*fs = NULL;
		return EXIT_IO;
	}
	/* write-back by age would make the n-th block write depend on how fast
	 * the machine runs: only a full cache, fsync and sync write back */
	sufs_set_writeback(*fs, 50, 0);
	if (a->cache_bytes)
		sufs_set_cache_size(*fs, a->cache_bytes);
	if (a->fixed_time)
		sufs_set_clock(*fs, a->time_sec, 0);
	return 0;
}

int main(int argc, char **argv)
{
	struct args a;
	struct source src;
	struct report r;
	struct iodev *io = NULL;
	struct sufs_fs *fs = NULL;
	double start;
	int status, rc;

	prog_init("sufs-replay", argv);
	parse_args(argc, argv, &a);
	if (a.print_script)
		return print_script(&a);
	if (a.crash_check)
		return crash_check(&a.crash);

	memset(&r, 0, sizeof(r));
	r.mode = a.mode;
	start = now_seconds();
	status = open_source(&a, &src);
	if (!status)
		status = open_fs(&a, &io, &fs);
	if (status == EXIT_CRASHED) {
		status = crashed(fs, io, &r, PHASE_OPEN, 0);
		fs = NULL;
	}
	if (!status && !a.mode_given)
		r.mode = sufs_get_super(fs)->default_mode;
	if (!status && a.random) {
		rc = random_open(fs, a.seed, &src.gen);
		if (rc) {
			errmsg("reading the tree of %s: %s", shown(a.image), sufs_strerror(rc));
			sufs_close(fs);
			status = EXIT_IO;
		}
	}
	if (!status) {
		r.block_size = sufs_get_super(fs)->block_size;
		status = run_lines(fs, io, &src, &a, &r);
	}
	r.seconds = now_seconds() - start;
	close_source(&src);
	rc = iodev_free(io);
	if (rc && a.iolog && status != EXIT_IO) {
		errmsg("writing the I/O log %s: %s", shown(a.iolog), strerror(-rc));
		status = EXIT_FILE;
	}
	if (a.stats && (status == EXIT_OK || status == EXIT_CRASHED))
		print_report(&r, a.json);
	if (fflush(stdout) || ferror(stdout)) {
		errmsg("writing the output: %s", strerror(errno));
		if (status == EXIT_OK)
			status = EXIT_FILE;
	}
	return status;
}
