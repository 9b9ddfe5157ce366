/*
 * fsck.sufs - check and repair a sufs file system.
 *
 * The checking is libsufs's (sufs_check): this program chooses the policy
 * from the options (fsck(8)'s -n, -y, -p, plus -f, leak-only and -s), asks
 * questions on a terminal, prints what the library reports (as text or as
 * JSON), draws progress and turns the outcome into fsck(8)'s exit status.
 *
 * With -b it runs the background check instead (sufs_check_background):
 * the image is opened for writing as the live file system, a snapshot of
 * it is checked for leaks, and what is found is freed on the live image.
 * It asks nothing: the library decides, leaks only, after the check.
 */
#include "config.h"

#include <sufs.h>

#include "ctl.h"
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

struct jproblem {
	const struct sufs_problem_def *def;
	char *message;
	int fixed;
};

struct ui {
	const char *image;
	char *name;                /* the image as text shows it (escaped) */
	unsigned flags;
	int json, verbose, interactive, yes_all;
	int background;            /* -b */
	char refused[128];         /* -b refused: why */
	char error[256];           /* why the check could not run (describe_error) */
	int asked;                 /* the current problem was asked and answered */
	int blank;                 /* what was printed last ends with a blank line */
	int progress_fd;           /* -1: none */
	int bar;                   /* draw a bar (struct progress) */
	struct progress prog;
	unsigned prog_pass;
	int prog_on;
	struct jproblem *probs;
	size_t nprobs, capprobs;
	unsigned passes[8];
	char pass_names[8][64];
	size_t npasses;
};

/* A background check refused (fsck_ffs -F and -B have their own status
 * too): not one of fsck(8)'s bits, so a caller cannot mistake it. */
#define EXIT_BG_REFUSED 64

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [-n | -y | -p] [-f] [-L] [-v] [-C FD] [--json] [-s SB] IMAGE\n"
		"       %s -b [-n | -y | -p] [--throttle KIB] [-v] [-C FD] [--json] IMAGE\n"
		"Check a sufs file system and repair what is wrong.\n"
		"\n"
		"  -n                 answer no to every question; never open IMAGE for writing\n"
		"  -y                 answer yes to every question\n"
		"  -p, -a             preen: fix without asking what is safe to fix (leaks),\n"
		"                     stop at anything else\n"
		"  -f                 check even a file system marked clean\n"
		"  -L, --leaks-only   fix leaks only; if anything worse is found, change nothing\n"
		"  -v                 verbose: every pass, every problem, and statistics\n"
		"  -C FD              progress to file descriptor FD (a bar on a terminal,\n"
		"                     \"PASS DONE TOTAL IMAGE\" lines otherwise; 0: a bar)\n"
		"  -s SB              use the superblock at byte offset SB, or BLOCK:BLOCKSIZE\n"
		"  -b, --background   check a snapshot of the live file system for leaks and\n"
		"                     free them on it (images written in softdep mode only);\n"
		"                     with -n nothing is freed, but the snapshot is written\n"
		"      --throttle KIB with -b: read the snapshot at most KIB KiB/s\n"
		"      --json         a machine-readable report on standard output\n"
		"      --help         show this help and exit\n"
		"  -V, --version      show the version and exit\n"
		"\n"
		"Without -n, -y or -p, questions are asked on a terminal; without a terminal\n"
		"the answer is no (as -n).\n"
		"Exit status (bits, ORed): 0 no errors, 1 errors corrected, 4 errors left\n"
		"uncorrected, 8 operational error, 16 usage error, 32 cancelled,\n"
		"128 library error; with -b, 64 alone: refused, run a full check.\n"
		"See fsck.sufs(8).\n",
		prog, prog);
}

/* Print a message with its first letter capitalised.  The names in it are
 * the image's bytes: what would not show is escaped, as names are. */
static void put_message(FILE *f, const char *m)
{
	fputc(toupper((unsigned char)m[0]), f);
	print_name(f, m + 1, strlen(m + 1));
}

static void progress_off(struct ui *u)
{
	if (u->prog_on && u->bar)
		progress_end(&u->prog);
	u->prog_on = 0;
}

/*
 * Read one key from the terminal without waiting for Enter (as e2fsck
 * does): 0 and *key, or -1 at end of input, on an error or an interrupt.
 */
static int read_key(char *key)
{
	struct termios old, raw;
	ssize_t n;

	if (tcgetattr(STDIN_FILENO, &old))
		return -1;
	raw = old;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSANOW, &raw))
		return -1;
	n = read(STDIN_FILENO, key, 1); /* SIGINT interrupts it (no SA_RESTART) */
	tcsetattr(STDIN_FILENO, TCSANOW, &old);
	/* the end-of-file key (Ctrl-D) comes as a byte without ICANON */
	return n == 1 && *key != (char)old.c_cc[VEOF] && !interrupted ? 0 : -1;
}

static int ui_ask(void *arg, const struct sufs_problem *p)
{
	struct ui *u = arg;
	int def = !(p->def->flags & SUFS_PR_NO), yes;
	char key;

	progress_off(u);
	u->asked = 1;
	put_message(stdout, p->message);
	if (u->yes_all) {
		printf(".  %s? yes\n\n", p->def->prompt);
		return 1;
	}
	printf(".  %s%s? ", p->def->prompt, def ? "<y>" : "<n>");
	fflush(stdout);
	for (;;) {
		if (read_key(&key)) {
			yes = 0; /* end of input, or interrupted: no */
			break;
		}
		if (key == '\n' || key == '\r') {
			yes = def;
			break;
		}
		if (key == 'y' || key == 'Y' || key == 'n' || key == 'N') {
			yes = key == 'y' || key == 'Y';
			break;
		}
		if (key == 'a' || key == 'A') {
			u->yes_all = 1;
			yes = 1;
			break;
		}
		/* anything else: ask again, as e2fsck does, with the answers */
		printf("\n(y yes, n no, a yes to all)  %s%s? ", p->def->prompt,
		       def ? "<y>" : "<n>");
		fflush(stdout);
	}
	printf("%s%s\n\n", yes ? "yes" : "no", yes && u->yes_all ? " to all" : "");
	u->blank = 1;
	return yes;
}

static void ui_report(void *arg, const struct sufs_problem *p, int fixed)
{
	struct ui *u = arg;
	struct jproblem *j;

	if (u->json) {
		if (u->nprobs == u->capprobs) {
			size_t cap = u->capprobs ? 2 * u->capprobs : 32;
			j = realloc(u->probs, cap * sizeof(*j));
			if (!j)
				return;
			u->probs = j;
			u->capprobs = cap;
		}
		j = &u->probs[u->nprobs];
		j->message = strdup(p->message);
		if (!j->message)
			return;
		j->def = p->def;
		j->fixed = fixed;
		u->nprobs++;
		return;
	}
	if (u->asked) {
		u->asked = 0;
		return;
	}
	progress_off(u);
	if (u->background) {
		/* as found in the snapshot: what becomes of it is decided after
		 * the check, for all alike (the summary says) */
		if ((u->flags & SUFS_CHECK_PREEN) && (p->def->flags & SUFS_PR_LEAK) &&
		    !u->verbose)
			return;
		if (u->flags & SUFS_CHECK_PREEN)
			printf("%s: ", u->name);
		put_message(stdout, p->message);
		printf(".\n");
		u->blank = 0;
		return;
	}
	if (u->flags & SUFS_CHECK_PREEN) {
		/* preen is quiet about what it may fix, unless -v */
		if (fixed && !u->verbose)
			return;
		printf("%s: ", u->name);
		put_message(stdout, p->message);
		printf(fixed ? ".  FIXED.\n" : ".\n");
		u->blank = 0;
		return;
	}
	put_message(stdout, p->message);
	printf(".  %s? %s\n\n", p->def->prompt, fixed ? "yes" : "no");
	u->blank = 1;
}

static void ui_pass(void *arg, unsigned pass, const char *name)
{
	struct ui *u = arg;

	if (u->npasses < sizeof(u->passes) / sizeof(u->passes[0])) {
		u->passes[u->npasses] = pass;
		snprintf(u->pass_names[u->npasses], sizeof(u->pass_names[0]), "%s", name);
		u->npasses++;
	}
	progress_off(u);
	if (u->json || ((u->flags & SUFS_CHECK_PREEN) && !u->verbose))
		return;
	if (pass == 0 && !u->verbose)
		return;
	printf("Pass %u: %s\n", pass, name);
	u->blank = 0;
	fflush(stdout);
}

static void ui_progress(void *arg, unsigned pass, uint64_t done, uint64_t total)
{
	struct ui *u = arg;
	static const char *const labels[] = { "Pass 0", "Pass 1", "Pass 2", "Pass 3",
					      "Pass 4", "Pass 5" };

	if (u->progress_fd < 0)
		return;
	if (u->bar) {
		if (!u->prog_on || u->prog_pass != pass) {
			progress_off(u);
			progress_start(&u->prog, labels[pass < 6 ? pass : 0], total);
			u->prog_pass = pass;
			u->prog_on = 1;
		}
		progress_update(&u->prog, done);
		return;
	}
	dprintf(u->progress_fd, "%u %llu %llu %s\n", pass, (unsigned long long)done,
		(unsigned long long)total, u->name);
}

static int ui_cancelled(void *arg)
{
	(void)arg;
	return interrupted;
}

static void print_json(struct ui *u, const struct sufs_check_result *r, int status)
{
	/* -b decides for every problem at once, after the check: they were
	 * fixed when the fixes were applied and none was left */
	int bg_fixed = (status & SUFS_EXIT_CORRECTED) && !(status & SUFS_EXIT_UNCORRECTED);
	size_t i;

	printf("{\n  \"image\": ");
	json_str(stdout, u->image, strlen(u->image));
	printf(",\n  \"background\": %s", u->background ? "true" : "false");
	printf(",\n  \"status\": %d,\n", status);
	printf("  \"skipped\": %s,\n  \"halted\": %s,\n  \"modified\": %s,\n",
	       r->skipped ? "true" : "false", r->halted ? "true" : "false",
	       r->modified ? "true" : "false");
	printf("  \"superblock\": %llu,\n", (unsigned long long)r->sb_offset);
	printf("  \"passes\": [");
	for (i = 0; i < u->npasses; i++) {
		printf("%s\n    {\"pass\": %u, \"name\": ", i ? "," : "", u->passes[i]);
		json_str(stdout, u->pass_names[i], strlen(u->pass_names[i]));
		printf("}");
	}
	printf("%s],\n  \"problems\": [", u->npasses ? "\n  " : "");
	for (i = 0; i < u->nprobs; i++) {
		const struct jproblem *j = &u->probs[i];
		printf("%s\n    {\"code\": %u, \"name\": \"%s\", \"pass\": %u, \"leak\": %s, "
		       "\"message\": ", i ? "," : "", j->def->code, j->def->name, j->def->pass,
		       (j->def->flags & SUFS_PR_LEAK) ? "true" : "false");
		json_str(stdout, j->message, strlen(j->message));
		printf(", \"fixed\": %s}", (u->background ? bg_fixed : j->fixed) ? "true" : "false");
	}
	printf("%s],\n", u->nprobs ? "\n  " : "");
	printf("  \"counts\": {\"problems\": %u, \"fixed\": %u, \"leaks\": %u, \"other\": %u},\n",
	       r->problems, r->fixed, r->leaks, r->nonleaks);
	printf("  \"inodes\": {\"used\": %u, \"total\": %u},\n", r->inodes_used, r->inodes_count);
	printf("  \"blocks\": {\"used\": %llu, \"total\": %llu},\n",
	       (unsigned long long)r->blocks_used, (unsigned long long)r->blocks_count);
	printf("  \"error\": ");
	if (u->refused[0]) {
		json_str(stdout, u->refused, strlen(u->refused));
	} else if (u->error[0]) {
		json_str(stdout, u->error, strlen(u->error));
	} else if (r->error) {
		const char *m = sufs_strerror(r->error);
		json_str(stdout, m, strlen(m));
	} else {
		printf("null");
	}
	printf("\n}\n");
}

/* One blank line before what follows, whether or not the last problem's
 * report ended with one. */
static void gap(struct ui *u)
{
	if (!u->blank)
		putchar('\n');
	u->blank = 0;
}

static void print_summary(struct ui *u, const struct sufs_check_result *r)
{
	if (r->skipped) {
		printf("%s: clean, %u/%u files, %llu/%llu blocks\n", u->name, r->inodes_used,
		       r->inodes_count, (unsigned long long)r->blocks_used,
		       (unsigned long long)r->blocks_count);
		return;
	}
	if (r->halted && (u->flags & SUFS_CHECK_PREEN)) {
		gap(u);
		printf("%s: UNEXPECTED INCONSISTENCY; RUN fsck.sufs MANUALLY.\n"
		       "\t(i.e., without -a or -p options)\n", u->name);
		if (u->background)
			printf("%s: the file system is flagged as needing a full check.\n",
			       u->name);
		return;
	}
	if (r->halted) {
		gap(u);
		printf("%s: problems worse than leaks found: nothing was changed.\n", u->name);
		if (u->background && !(u->flags & SUFS_CHECK_NO))
			printf("%s: the file system is flagged as needing a full check.\n", u->name);
		printf("%s: run a full check: fsck.sufs -f %s\n", u->name, u->name);
		return;
	}
	if (r->status & SUFS_EXIT_CANCELLED) {
		/* the counts of a check cut short are no file system's: none */
		gap(u);
		printf("%s: interrupted; the check did not finish.\n", u->name);
		if (r->modified)
			printf("%s: ***** FILE SYSTEM WAS MODIFIED *****\n", u->name);
		return;
	}
	if (r->modified && !(u->flags & SUFS_CHECK_PREEN)) {
		gap(u);
		printf("%s: ***** FILE SYSTEM WAS MODIFIED *****\n", u->name);
	}
	if (r->status & SUFS_EXIT_UNCORRECTED) {
		gap(u);
		printf("%s: ********** WARNING: file system still has errors **********\n\n",
		       u->name);
	}
	printf("%s: %u/%u files, %llu/%llu blocks\n", u->name, r->inodes_used, r->inodes_count,
	       (unsigned long long)r->blocks_used, (unsigned long long)r->blocks_count);
	if (u->verbose)
		printf("%s: %u director%s; %u problem%s (%u leak%s), %u fixed\n", u->name,
		       r->dirs, r->dirs == 1 ? "y" : "ies", r->problems, r->problems == 1 ? "" : "s",
		       r->leaks, r->leaks == 1 ? "" : "s", r->fixed);
}

/*
 * Why the check could not run, into u->error: the library's message and
 * where it happened, but for two cases where those words mislead.  An
 * image too small to hold a superblock where one is looked for has no
 * magic number to be bad, and says its size instead; a truncated image
 * is not followed by the superblock field that tells it (blocks_count).
 */
static void describe_error(struct ui *u, uint64_t sb_offset, int rc, const char *where)
{
	/* an image in use: by a sufs-fuse mount, the message says */
	const char *m = rc == -SUFS_EINUSE ? open_error(u->image, rc) : sufs_strerror(rc);
	uint64_t off = sb_offset ? sb_offset : SUFS_SB_OFFSET;
	struct stat st;

	if (u->error[0])
		return; /* said already, better */
	if (rc == -SUFS_ESHORT && stat(u->image, &st) == 0 && S_ISREG(st.st_mode) &&
	    (off > (uint64_t)st.st_size || (uint64_t)st.st_size - off < SUFS_SB_SIZE)) {
		snprintf(u->error, sizeof(u->error), "not a sufs file system: the image is "
			 "%llu bytes, too small to hold a superblock at byte %llu",
			 (unsigned long long)st.st_size, (unsigned long long)off);
		return;
	}
	/* -s names a place: what is not there is said of it */
	if (sb_offset && rc == -SUFS_EMAGIC) {
		snprintf(u->error, sizeof(u->error), "no sufs superblock at byte %llu (-s): "
			 "bad magic number", (unsigned long long)sb_offset);
		return;
	}
	/* "(bad magic number)" once, not twice */
	if (rc == -SUFS_ETRUNCATED || (where && strstr(m, where)))
		where = NULL;
	snprintf(u->error, sizeof(u->error), "%s%s%s%s", m, where ? " (" : "",
		 where ? where : "", where ? ")" : "");
}

/* -s SB: a byte offset, or BLOCK:BLOCKSIZE. */
static int parse_sb(const char *s, uint64_t *off)
{
	char buf[64], *colon;
	uint64_t blk, bs;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	colon = strchr(buf, ':');
	if (!colon)
		return parse_u64(buf, off);
	*colon = 0;
	if (parse_u64(buf, &blk) || parse_u64(colon + 1, &bs) || bs < 1024 || bs > 65536 ||
	    (bs & (bs - 1)) || blk > UINT64_MAX / bs)
		return -1;
	*off = blk * bs;
	return 0;
}

/*
 * `fsck.sufs -b 32768 IMAGE`, e2fsck's way to name a backup superblock:
 * here -b is the background check and the backup is -s.  Say so, with the
 * -s that names the copy at that block, when the image has one there.
 */
static void b_is_background(uint64_t blk, const char *image)
{
	uint64_t off;
	uint32_t bs;

	errmsg("-b is the background check, and takes no block number; a backup "
	       "superblock is given with -s");
	if (sb_find(image, blk, &off, &bs) == 0)
		errmsg("the superblock copy at block %llu of %s: fsck.sufs -s %llu:%u %s",
		       (unsigned long long)blk, shown(image), (unsigned long long)blk, bs,
		       shown(image));
	else
		errmsg("give it as -s BLOCK:BLOCKSIZE, or as a byte offset");
}

/* Why the library would refuse a background check of this superblock
 * (sufs_check_background()'s rule), in why; 0 when it would not. */
static int bg_refusal(const struct sufs_super *sb, char *why, size_t len)
{
	if (sb->flags & SUFS_FLAG_NEEDS_FSCK) {
		snprintf(why, len, "it is flagged as needing a full check");
		return 1;
	}
	if (sb->write_mode != SUFS_MODE_SOFTDEP) {
		snprintf(why, len, "it was last written in %s mode (the background "
			 "check needs softdep)", sufs_mode_name(sb->write_mode));
		return 1;
	}
	return 0;
}

static void bg_refused(struct ui *u, const char *why)
{
	snprintf(u->refused, sizeof(u->refused), "background check refused: %s", why);
	errmsg("%s: cannot check in the background: %s", u->name, why);
	errmsg("%s: run a full check: fsck.sufs -f %s", u->name, u->name);
}

/* ---- -b on a mounted image: through its sufs-fuse daemon ------------------- */

/* One line of the daemon's report (common/ctl.h) to the callbacks and r;
 * 1 at its last line ("done"), with *rc. */
static int remote_line(struct ui *u, const struct sufs_check_opts *o,
		       struct sufs_check_result *r, char **w, int n, int *rc)
{
	static char where[128];
	struct sufs_problem p;
	uint32_t v[13];
	int i;

	if (!strcmp(w[0], "pass") && n == 3 && !parse_u32(w[1], &v[0])) {
		o->pass(o->arg, v[0], w[2]);
	} else if (!strcmp(w[0], "progress") && n == 4 && o->progress) {
		uint64_t done, total;
		if (!parse_u32(w[1], &v[0]) && !parse_u64(w[2], &done) && !parse_u64(w[3], &total))
			o->progress(o->arg, v[0], done, total);
	} else if (!strcmp(w[0], "problem") && n == 3 && !parse_u32(w[1], &v[0])) {
		memset(&p, 0, sizeof(p));
		p.def = sufs_problem_def(v[0]);
		snprintf(p.message, sizeof(p.message), "%s", w[2]);
		if (p.def)
			o->report(o->arg, &p, 0);
	} else if (!strcmp(w[0], "result") && n == 14) {
		for (i = 0; i < 13; i++)
			if (parse_u32(w[i + 1], &v[i]))
				v[i] = 0;
		r->status = (int)v[0];
		r->skipped = (int)v[1];
		r->halted = (int)v[2];
		r->modified = (int)v[3];
		r->problems = v[4];
		r->fixed = v[5];
		r->leaks = v[6];
		r->nonleaks = v[7];
		r->inodes_used = v[8];
		r->inodes_count = v[9];
		r->dirs = v[10];
		parse_u64(w[12], &r->blocks_used);
		parse_u64(w[13], &r->blocks_count);
	} else if (!strcmp(w[0], "refused") && n == 2) {
		bg_refused(u, w[1]);
	} else if (!strcmp(w[0], "done") && n >= 2) {
		*rc = (int)strtol(w[1], NULL, 10);
		if (n >= 3) {
			snprintf(where, sizeof(where), "%s", w[2]);
			r->error_where = where;
		}
		return 1;
	}
	return 0;
}

/*
 * -b on an image a sufs-fuse daemon has mounted: the daemon runs the
 * background check (it is the image's only writer) and reports it line by
 * line, which goes to the same callbacks as a check of our own.  Ctrl-C
 * asks the daemon to stop.  Returns as run_background().
 */
static int remote_background(struct ui *u, const struct sufs_check_opts *o,
			     struct sufs_check_result *r, struct ctl *c)
{
	char flags[16], throttle[16], *w[CTL_MAX_WORDS];
	int n, rc = 0, cancelled = 0, done = 0;

	memset(r, 0, sizeof(*r));
	snprintf(flags, sizeof(flags), "%u", o->flags);
	snprintf(throttle, sizeof(throttle), "%u", o->throttle_kib);
	n = ctl_send(c, -1, "check", flags, throttle, NULL);
	while (!n && !done) {
		n = ctl_recv(c, w, CTL_MAX_WORDS, 200);
		if (n == -ETIMEDOUT || n == -EINTR) {
			if (interrupted && !cancelled)
				cancelled = ctl_send(c, -1, "cancel", NULL) == 0;
			n = 0;
			continue;
		}
		if (n <= 0)
			break;
		done = remote_line(u, o, r, w, n, &rc);
		n = 0;
	}
	ctl_close(c);
	if (!done) {
		rc = n < 0 ? n : -EPIPE; /* the daemon went away */
		r->error_where = "talking to the sufs-fuse daemon";
	}
	if (rc == -SUFS_EBGREFUSED)
		return rc;
	if (rc) {
		r->error = rc;
		r->status |= rc == -ENOMEM ? SUFS_EXIT_LIBERROR : SUFS_EXIT_OPERROR;
	}
	return rc;
}

/*
 * -b: the background check of the image as a live file system.  Returns
 * as sufs_check() does, or -SUFS_EBGREFUSED (said on stderr) with the
 * image as it was.
 */
static int run_background(struct ui *u, const struct sufs_check_opts *o,
			  struct sufs_check_result *r)
{
	const struct sufs_super *sb;
	struct sufs_fs *fs;
	struct ctl c;
	struct stat st;
	char why[128];
	int rc, err, refused;

	/* a mounted image (or its mount point): the daemon checks it */
	if (ctl_connect(u->image, &c) == 0)
		return remote_background(u, o, r, &c);
	if (stat(u->image, &st) == 0 && S_ISDIR(st.st_mode)) {
		memset(r, 0, sizeof(*r));
		snprintf(u->error, sizeof(u->error), "a directory, and not the mount point of a "
			 "sufs-fuse mount");
		r->error = -EISDIR;
		r->status = SUFS_EXIT_OPERROR;
		return -EISDIR;
	}
	/* The refusal is decided on a read-only look first: opened for
	 * writing, the image is marked in use at once, and closing it would
	 * record this session's mode over the one that makes it refused. */
	memset(r, 0, sizeof(*r));
	rc = sufs_open(u->image, 0, &fs);
	if (!rc) {
		refused = bg_refusal(sufs_get_super(fs), why, sizeof(why));
		sufs_close(fs);
		if (refused) {
			bg_refused(u, why);
			return -SUFS_EBGREFUSED;
		}
		rc = sufs_open(u->image, SUFS_OPEN_RDWR, &fs);
	}
	if (rc) {
		r->error = rc;
		r->status = rc == -ENOMEM ? SUFS_EXIT_LIBERROR : SUFS_EXIT_OPERROR;
		return rc;
	}
	rc = sufs_check_background(fs, o, r);
	if (rc == -SUFS_EBGREFUSED) {
		/* changed by another writer between the two opens: leave it
		 * to the full check as it is, not closed by us */
		if (!bg_refusal(sufs_get_super(fs), why, sizeof(why)))
			snprintf(why, sizeof(why), "the library refused it");
		sufs_abandon(fs);
		bg_refused(u, why);
		return rc;
	}
	/* the check of the snapshot is a leak-only one that writes nothing:
	 * it halts at anything worse as one that writes would */
	if (!rc && r->nonleaks)
		r->halted = 1;
	/* the counts of the live file system as its superblock has them now
	 * (the check's are the snapshot's: with the snapshot's own file, and
	 * before the fixes) */
	sb = sufs_get_super(fs);
	r->inodes_count = sb->inodes_count;
	r->inodes_used = sb->inodes_count - sb->free_inodes;
	r->blocks_count = sb->blocks_count;
	r->blocks_used = sb->blocks_count - sb->free_blocks;
	err = sufs_close(fs);
	if (err && !rc) {
		rc = err;
		r->error = err;
		r->error_where = "closing the file system";
		r->status |= SUFS_EXIT_OPERROR;
	}
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "leaks-only", no_argument, NULL, 'L' },
		{ "background", no_argument, NULL, 'b' },
		{ "throttle", required_argument, NULL, 'T' },
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'H' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct sufs_check_opts o;
	struct sufs_check_result r;
	struct ui u;
	struct sigaction sa;
	int c, modes = 0, status, rc, throttle = 0;
	uint32_t fd;
	uint64_t blk;

	prog_init("fsck.sufs", argv);
	memset(&u, 0, sizeof(u));
	memset(&o, 0, sizeof(o));
	u.progress_fd = -1;
	while ((c = getopt_long(argc, argv, "nypafLbvC:s:V", longopts, NULL)) != -1) {
		switch (c) {
		case 'n': o.flags |= SUFS_CHECK_NO; modes++; break;
		case 'y': o.flags |= SUFS_CHECK_YES; modes++; break;
		case 'p':
		case 'a': o.flags |= SUFS_CHECK_PREEN; modes++; break;
		case 'f': o.flags |= SUFS_CHECK_FORCE; break;
		case 'L': o.flags |= SUFS_CHECK_LEAKS_ONLY; break;
		case 'b': u.background = 1; break;
		case 'T':
			if (parse_u32(optarg, &o.throttle_kib)) {
				errmsg("--throttle: not a number of KiB per second: %s",
				       shown(optarg));
				return SUFS_EXIT_USAGE;
			}
			throttle = 1;
			break;
		case 'v': u.verbose = 1; break;
		case 'J': u.json = 1; break;
		case 'C':
			if (parse_u32(optarg, &fd) || fd > 1024) {
				errmsg("-C: not a file descriptor: %s", shown(optarg));
				return SUFS_EXIT_USAGE;
			}
			/* 0 is a progress bar; any other must be open */
			if (fd && fcntl((int)fd, F_GETFL) == -1) {
				errmsg("-C: file descriptor %u is not open", fd);
				return SUFS_EXIT_USAGE;
			}
			u.progress_fd = (int)fd;
			break;
		case 's':
			if (parse_sb(optarg, &o.sb_offset) || o.sb_offset == 0) {
				errmsg("-s: not a byte offset or BLOCK:BLOCKSIZE: %s",
				       shown(optarg));
				return SUFS_EXIT_USAGE;
			}
			break;
		case 'H': usage(stdout); return 0;
		case 'V': print_version(); return 0;
		default: usage(stderr); return SUFS_EXIT_USAGE;
		}
	}
	if (u.background && argc - optind == 2 && !parse_u64(argv[optind], &blk)) {
		b_is_background(blk, argv[optind + 1]);
		return SUFS_EXIT_USAGE;
	}
	if (optind != argc - 1) {
		if (optind == argc)
			errmsg("no image given");
		else
			errmsg("one image at a time");
		usage(stderr);
		return SUFS_EXIT_USAGE;
	}
	if (modes > 1) {
		errmsg("-n, -y and -p exclude each other");
		return SUFS_EXIT_USAGE;
	}
	if (u.background && ((o.flags & SUFS_CHECK_LEAKS_ONLY) || o.sb_offset)) {
		errmsg("-b checks leaks only, from the primary superblock: no -L or -s");
		return SUFS_EXIT_USAGE;
	}
	if (throttle && !u.background) {
		errmsg("--throttle goes with -b");
		return SUFS_EXIT_USAGE;
	}
	u.image = argv[optind];
	u.name = *u.image ? escape_name(u.image, strlen(u.image)) : strdup("''");
	if (!u.name) {
		errmsg("out of memory");
		return SUFS_EXIT_LIBERROR;
	}
	if (u.background) {
		/* nothing to ask: the background fixes leaks only, unless -n */
	} else if (!modes && (o.flags & SUFS_CHECK_LEAKS_ONLY)) {
		o.flags |= SUFS_CHECK_YES; /* leak-only: yes to leaks, no to the rest */
	} else if (!modes) {
		if (!u.json && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)) {
			u.interactive = 1;
			o.ask = ui_ask;
		} else {
			o.flags |= SUFS_CHECK_NO;
		}
	}
	u.flags = o.flags;
	if (u.progress_fd >= 0) {
		u.bar = u.progress_fd == 0 || isatty(u.progress_fd);
		o.progress = ui_progress;
	}
	o.report = ui_report;
	o.pass = ui_pass;
	o.cancelled = ui_cancelled;
	o.arg = &u;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL); /* the terminal went: stop as for SIGTERM */

	if (!u.background && (o.flags & SUFS_CHECK_NO))
		ctl_warn_if_live(u.image); /* what is read may be out of date */
	rc = u.background ? run_background(&u, &o, &r) : sufs_check(u.image, &o, &r);
	progress_off(&u);
	if (rc == -SUFS_EBGREFUSED) {
		/* said on stderr; the JSON says it too */
		if (u.json) {
			r.error = rc;
			print_json(&u, &r, EXIT_BG_REFUSED);
		}
		status = EXIT_BG_REFUSED;
		goto out;
	}
	status = r.status;
	if (rc && !(status & (SUFS_EXIT_OPERROR | SUFS_EXIT_LIBERROR)))
		status |= SUFS_EXIT_OPERROR;
	if (rc)
		describe_error(&u, o.sb_offset, rc, r.error_where);
	if (u.json) {
		print_json(&u, &r, status);
	} else if (rc) {
		errmsg("%s: %s", u.name, u.error);
	} else {
		print_summary(&u, &r);
	}
out:
	for (size_t i = 0; i < u.nprobs; i++)
		free(u.probs[i].message);
	free(u.probs);
	free(u.name);
	return status;
}
