/*
 * sufs-fuse - mount a sufs image with FUSE, so that any program can use it.
 *
 * The daemon's life, and where each exit status comes from:
 *   1. the command line: sufs-fuse IMAGE MOUNTPOINT [-o OPTIONS]; what is
 *      not ours goes to libfuse, which refuses what it does not know  (EXIT_USAGE,
 *      EXIT_MOUNTPOINT)
 *   2. the image: its superblock says whether it may be written (one
 *      flagged as needing a full check, or left unclean by a writer in
 *      async mode, is refused read-write), then it is opened, holding
 *      the image's write lock, and set up as the options say           (EXIT_REFUSED,
 *                                                                       EXIT_OPEN, EXIT_FAIL)
 *   3. the mount; then, unless -f, the daemon goes to the background;
 *      its threads start: the session loop's workers (ops.c), the
 *      write-back timer (below), the control channel (ctl.c), which
 *      first runs the background check when a crash left the image
 *      unclean                                                         (EXIT_FAIL)
 *   4. unmount (fusermount3 -u, umount) or SIGTERM, SIGINT, SIGHUP end
 *      the loop; the threads stop; everything is written back and the
 *      image is closed clean (sufs_close)                              (EXIT_WRITEBACK)
 * SIGKILL is a crash: the image holds what the write-back had written,
 * which soft updates keep to leaks (the next mount frees them).
 */
#include "config.h"

#include "ctl-server.h"
#include "sufs-fuse.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

/* Exit statuses (common/util.h's scheme; man/sufs-fuse.8, EXIT STATUS), by
 * what they mean to sufs-fuse. */
enum {
	EXIT_OPEN = EXIT_IMAGE,    /* the image cannot be opened */
	EXIT_REFUSED = EXIT_IMAGE, /* read-write refused: the image needs fsck.sufs -f */
	EXIT_FAIL = EXIT_FAILED,   /* the mount cannot be made, or serving it failed */
	EXIT_MOUNTPOINT = EXIT_FILE, /* the mount point cannot be found */
	EXIT_WRITEBACK = EXIT_IO,  /* writing back as the image is closed failed */
};

/* The defaults of the write-back (man/sufs-fuse.8): FreeBSD's syncer
 * writes metadata back within about 30 s; half of the cache dirty is the
 * library's own limit. */
#define DEF_DIRTY 50
#define DEF_AGE 30
#define DEF_TIMEOUT 10.0

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s IMAGE MOUNTPOINT [-f] [-d] [-s] [-o OPTION[,OPTION...]]\n"
		"Mount the sufs file system in IMAGE on MOUNTPOINT.\n"
		"\n"
		"  -f                 stay in the foreground (messages on standard error)\n"
		"  -d                 debug: -f, and every request shown\n"
		"  -s                 serve one request at a time (one thread)\n"
		"  -o mode=MODE       write mode: softdep (the default), sync or async\n"
		"  -o ro              read-only\n"
		"  -o cache=SIZE      the buffer cache (64M by default; K, M, G)\n"
		"  -o dirty=PERCENT   write back when more of the cache is dirty (%d)\n"
		"  -o age=SECONDS     write back changes older than this (%d; 0: never by age)\n"
		"  -o timeout=SECONDS how long the kernel may cache names and attributes (%g)\n"
		"  -o nobgcheck       after a crash, do not run the background check\n"
		"  -o noacl           ACLs are kept but not enforced (the mode bits alone)\n"
		"  -o direct          read and write the image with O_DIRECT (past the page cache)\n"
		"  -o bgthrottle=KIB  the background check reads at most KIB KiB/s\n"
		"  -o OPTION          libfuse's and mount's options (allow_other, ...)\n"
		"      --help         show this help (and libfuse's options) and exit\n"
		"  -V, --version      show the version and exit\n"
		"\n"
		"Exit status: 0 unmounted cleanly (or, without -f, mounted), 1 usage error,\n"
		"2 the image cannot be opened (or, read-write, needs fsck.sufs -f), 4 the mount\n"
		"cannot be made or serving it failed, 8 no mount point, 16 writing back failed.\n"
		"See sufs-fuse(8).\n",
		prog, DEF_DIRTY, DEF_AGE, DEF_TIMEOUT);
}

/* ---- messages ---------------------------------------------------------------------- */

static int to_syslog;

void note(struct mount *m, int level, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	(void)m;
	va_start(ap, fmt);
	if (to_syslog) {
		vsyslog(level, fmt, ap);
	} else {
		vsnprintf(buf, sizeof(buf), fmt, ap);
		if (level == LOG_WARNING)
			warnmsg("%s", buf);
		else
			errmsg("%s", buf);
	}
	va_end(ap);
}

/* ---- the command line ----------------------------------------------------------------- */

struct cmdline {
	char *image, *mountpoint;
	char *mode, *cache, *dirty, *age, *timeout, *bgthrottle;
	int ro, nobgcheck, noacl, direct, help, version, extra;
	int max_threads;           /* -o max_threads was given (libfuse's option) */
};

enum { KEY_RO, KEY_HELP, KEY_VERSION, KEY_MAX_THREADS };

#define OPT(t, field) { t, offsetof(struct cmdline, field), 1 }
static const struct fuse_opt spec[] = {
	OPT("mode=%s", mode),
	OPT("cache=%s", cache),
	OPT("dirty=%s", dirty),
	OPT("age=%s", age),
	OPT("timeout=%s", timeout),
	OPT("nobgcheck", nobgcheck),
	OPT("noacl", noacl),
	OPT("direct", direct),
	OPT("bgthrottle=%s", bgthrottle),
	FUSE_OPT_KEY("ro", KEY_RO),
	FUSE_OPT_KEY("max_threads=", KEY_MAX_THREADS),
	FUSE_OPT_KEY("-h", KEY_HELP),
	FUSE_OPT_KEY("--help", KEY_HELP),
	FUSE_OPT_KEY("-V", KEY_VERSION),
	FUSE_OPT_KEY("--version", KEY_VERSION),
	FUSE_OPT_END
};

/* What fuse_opt_parse() does not take itself: IMAGE and MOUNTPOINT (ours),
 * ro (ours and libfuse's), the rest (libfuse's). */
static int opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct cmdline *c = data;

	(void)outargs;
	switch (key) {
	case KEY_RO:
		c->ro = 1;
		return 1; /* the kernel mounts it read-only too */
	case KEY_MAX_THREADS:
		c->max_threads = 1;
		return 1; /* libfuse's to read */
	case KEY_HELP:
		c->help = 1;
		return 0;
	case KEY_VERSION:
		c->version = 1;
		return 0;
	case FUSE_OPT_KEY_NONOPT:
		if (!c->image)
			c->image = strdup(arg);
		else if (!c->mountpoint)
			c->mountpoint = strdup(arg);
		else
			c->extra = 1;
		return 0;
	default:
		return 1;
	}
}

/* A whole number of an option, within [0, max]; -1 after the message. */
static int option_u32(const char *name, const char *s, uint32_t max, unsigned *out)
{
	uint32_t v;

	if (parse_u32(s, &v) || v > max) {
		errmsg("-o %s: not a number from 0 to %u: %s", name, max, shown(s));
		return -1;
	}
	*out = v;
	return 0;
}

/* Check our options and put them in m; EXIT_OK or EXIT_USAGE. */
static int take_options(const struct cmdline *c, struct mount *m, uint64_t *cache_bytes)
{
	unsigned t;

	m->mode = SUFS_MODE_SOFTDEP;
	m->dirty_percent = DEF_DIRTY;
	m->age_seconds = DEF_AGE;
	m->timeout = DEF_TIMEOUT;
	*cache_bytes = 0;
	if (c->mode && sufs_mode_parse(c->mode, &m->mode)) {
		errmsg("-o mode: softdep, sync or async, not %s", shown(c->mode));
		return EXIT_USAGE;
	}
	if (c->cache && (sufs_parse_size(c->cache, cache_bytes) || *cache_bytes == 0)) {
		errmsg("-o cache: not a size (such as 64M): %s", shown(c->cache));
		return EXIT_USAGE;
	}
	if (c->dirty && option_u32("dirty", c->dirty, 100, &m->dirty_percent))
		return EXIT_USAGE;
	if (c->age && option_u32("age", c->age, 86400, &m->age_seconds))
		return EXIT_USAGE;
	if (c->timeout) {
		if (option_u32("timeout", c->timeout, 86400, &t))
			return EXIT_USAGE;
		m->timeout = t;
	}
	if (c->bgthrottle && option_u32("bgthrottle", c->bgthrottle, UINT32_MAX, &t))
		return EXIT_USAGE;
	m->throttle_kib = c->bgthrottle ? t : 0;
	m->readonly = c->ro;
	m->bgcheck = !c->nobgcheck;
	m->acl = !c->noacl;
	m->direct = c->direct;
	return EXIT_OK;
}

/* fsname=IMAGE (what mount(8) and /proc/mounts show as the source, with
 * libfuse's escapes for ',' and '\'), subtype, default_permissions. */
static int add_mount_options(struct fuse_args *args, const char *image)
{
	char path[PATH_MAX], *opt, *o;
	const char *p;

	if (!realpath(image, path))
		snprintf(path, sizeof(path), "%s", image);
	opt = malloc(2 * strlen(path) + sizeof("fsname="));
	if (!opt)
		return -1;
	o = opt + sprintf(opt, "fsname=");
	for (p = path; *p; p++) {
		if (*p == ',' || *p == '\\')
			*o++ = '\\';
		*o++ = *p;
	}
	*o = 0;
	/* the kernel checks permissions: the mode bits, and the ACLs when
	 * op_init() turns them on */
	if (fuse_opt_add_arg(args, "-o") || fuse_opt_add_arg(args, opt) ||
	    fuse_opt_add_arg(args, "-osubtype=sufs-fuse,default_permissions")) {
		free(opt);
		return -1;
	}
	free(opt);
	return 0;
}

/* ---- the image -------------------------------------------------------------------------- */

/* The superblock on the device as it stands, when it can be read and
 * checks (else sufs_open_dev() will say what is wrong): 1, else 0. */
static int peek_super(struct sufs_dev *dev, struct sufs_super *sb)
{
	uint8_t raw[SUFS_SB_SIZE];

	if (dev->size < SUFS_SB_OFFSET + SUFS_SB_SIZE ||
	    sufs_dev_read(dev, SUFS_SB_OFFSET, raw, sizeof(raw)))
		return 0;
	sufs_super_decode(raw, sb);
	return sb->magic == SUFS_MAGIC && sb->checksum == sufs_super_csum(raw);
}

/*
 * May the image be written?  Not when it says it needs a full check, nor
 * when a writer in async mode left it unclean: nothing ordered its writes,
 * so it may hold anything.  EXIT_OK, or EXIT_REFUSED after the message.
 */
static int may_write(const char *image, const struct sufs_super *sb, int *unclean)
{
	const char *why = NULL;

	*unclean = !(sb->state & SUFS_STATE_CLEAN);
	if (sb->flags & SUFS_FLAG_NEEDS_FSCK)
		why = "it is flagged as needing a full check";
	else if (*unclean && sb->write_mode == SUFS_MODE_ASYNC)
		why = "it was not unmounted cleanly after writes in async mode";
	if (!why)
		return EXIT_OK;
	errmsg("%s: cannot mount read-write: %s", shown(image), why);
	errmsg("%s: run a full check first: fsck.sufs -f %s (or mount it read-only: -o ro)",
	       shown(image), shown(image));
	return EXIT_REFUSED;
}

/* Open the image as the options say; EXIT_OK, or the status after the
 * message. */
static int open_mounted_image(struct mount *m, uint64_t cache_bytes)
{
	struct sufs_dev *dev;
	struct sufs_super sb;
	int rc, unclean = 0, status;

	/* the write lock first (one writer at a time), then a look at the
	 * superblock, which must not be written if the image is refused */
	rc = sufs_dev_open(m->image, (m->readonly ? 0 : SUFS_DEV_RDWR) |
			   (m->direct ? SUFS_DEV_DIRECT : 0), &dev);
	if (rc == -EINVAL && m->direct) {
		errmsg("%s: cannot open with O_DIRECT (-o direct): the file system it is on "
		       "has no direct I/O", shown(m->image));
		return EXIT_OPEN;
	}
	if (rc) {
		errmsg("%s: %s", shown(m->image), open_error(m->image, rc));
		return EXIT_OPEN;
	}
	if (peek_super(dev, &sb)) {
		unclean = !(sb.state & SUFS_STATE_CLEAN);
		if (!m->readonly && (status = may_write(m->image, &sb, &unclean)) != EXIT_OK) {
			sufs_dev_close(dev);
			return status;
		}
	}
	rc = sufs_open_dev(dev, m->readonly ? 0 : SUFS_OPEN_RDWR, 0, &m->fs);
	if (rc) {
		sufs_dev_close(dev);
		errmsg("%s: %s", shown(m->image), open_error(m->image, rc));
		return EXIT_OPEN;
	}
	m->block_size = sufs_get_super(m->fs)->block_size;
	if (!(sufs_get_super(m->fs)->features_ro_compat & SUFS_FEATURE_RO_XATTR))
		m->acl = 0; /* no attributes, no ACLs */
	if (cache_bytes)
		sufs_set_cache_size(m->fs, (size_t)cache_bytes);
	sufs_set_writeback(m->fs, m->dirty_percent, m->age_seconds * 1000u);
	/* after a crash the image stays in softdep mode until the background
	 * check is done (ctl.c), since only there can it run */
	m->bgcheck = m->bgcheck && unclean && !m->readonly;
	if (unclean && !m->readonly && !m->bgcheck)
		note(m, LOG_WARNING, "%s: not unmounted cleanly: its leaks stay until a check "
		     "(fsck.sufs -b on the mount, or -f once unmounted)", m->image);
	rc = m->readonly || m->bgcheck ? 0 : sufs_set_mode(m->fs, m->mode);
	if (!rc)
		rc = nodes_init(&m->nodes, sufs_get_super(m->fs)->inodes_count);
	if (rc) {
		errmsg("%s: %s", shown(m->image), sufs_strerror(rc));
		sufs_close(m->fs);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

/* Write everything back and close, clean; the status. */
static int close_image(struct mount *m, int status)
{
	int rc = sufs_close(m->fs);

	nodes_free(&m->nodes);
	if (rc) {
		note(m, LOG_ERR, "%s: writing back: %s", m->image, sufs_strerror(rc));
		return EXIT_WRITEBACK;
	}
	return status;
}

/* ---- the write-back timer ------------------------------------------------------------- */

/*
 * Once a second, the library is asked to write back what its policy says
 * is due (older than age, or the cache too dirty): without it, changes
 * would wait for the next request however old they grew.
 */
static void *writeback_main(void *arg)
{
	struct mount *m = arg;
	struct timespec t;
	int rc, last = 0;

	pthread_mutex_lock(&m->wake_lock);
	while (!atomic_load(&m->stopping)) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		t.tv_sec += 1;
		pthread_cond_timedwait(&m->wake, &m->wake_lock, &t);
		if (atomic_load(&m->stopping))
			break;
		pthread_mutex_unlock(&m->wake_lock);
		sufs_lock(m->fs);
		rc = sufs_writeback_due(m->fs);
		sufs_unlock(m->fs);
		if (rc && rc != last)
			note(m, LOG_ERR, "%s: writing back: %s", m->image, sufs_strerror(rc));
		last = rc;
		pthread_mutex_lock(&m->wake_lock);
	}
	pthread_mutex_unlock(&m->wake_lock);
	return NULL;
}

/* Threads of our own get no signals (signal_main() takes those that end
 * the session; SIGUSR1 is for the loop's thread). */
static int start_thread(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -rc;
}

static int start_threads(struct mount *m)
{
	pthread_condattr_t ca;
	int rc;

	pthread_mutex_init(&m->wake_lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&m->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (!m->readonly) {
		rc = start_thread(&m->writeback, writeback_main, m);
		if (rc)
			return rc;
		m->writeback_started = 1;
	}
	return ctl_start(m, start_thread);
}

static void stop_threads(struct mount *m)
{
	pthread_mutex_lock(&m->wake_lock);
	atomic_store(&m->stopping, 1);
	pthread_cond_broadcast(&m->wake);
	pthread_mutex_unlock(&m->wake_lock);
	if (m->writeback_started)
		pthread_join(m->writeback, NULL);
	ctl_stop(m);
}

/* ---- signals ------------------------------------------------------------------------------ */

/*
 * SIGTERM, SIGINT and SIGHUP end the session: the daemon unmounts and
 * writes everything back.  They are taken by a thread of their own
 * (sigwait), never by a handler: libfuse's (fuse_set_signal_handlers)
 * only sets a flag, which the multithreaded loop's main thread can miss
 * when the signal comes between its test of the flag and its wait.  This
 * thread sets the flag and then interrupts that wait with SIGUSR1 (whose
 * handler does nothing) until the loop has returned.  SIGINT and SIGHUP
 * stay ignored when the program was started with them ignored (a job of a
 * shell script, nohup).
 */
struct signals {
	pthread_t thread, main;
	sigset_t set;
	struct fuse_session *se;
	atomic_int loop_done;
	int started;
};

static void kick(int sig)
{
	(void)sig;
}

static void *signal_main(void *arg)
{
	struct signals *s = arg;
	struct timespec pause = { 0, 20 * 1000 * 1000 };
	int sig;

	while (sigwait(&s->set, &sig) != 0)
		;
	fuse_session_exit(s->se);
	while (!atomic_load(&s->loop_done)) {
		pthread_kill(s->main, SIGUSR1);
		nanosleep(&pause, NULL);
	}
	return NULL;
}

/* Block the signals that end the session in every thread but the one
 * that waits for them (the threads made from now on inherit the mask). */
static int signals_start(struct signals *s, struct fuse_session *se)
{
	static const int ends[] = { SIGINT, SIGHUP };
	struct sigaction sa, old;
	size_t i;
	int rc;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = kick; /* no SA_RESTART: the loop's wait returns */
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&s->set);
	sigaddset(&s->set, SIGTERM); /* how daemons are stopped: always */
	for (i = 0; i < sizeof(ends) / sizeof(ends[0]); i++)
		if (sigaction(ends[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaddset(&s->set, ends[i]);
	s->se = se;
	s->main = pthread_self();
	atomic_store(&s->loop_done, 0);
	rc = -pthread_sigmask(SIG_BLOCK, &s->set, NULL);
	if (!rc)
		rc = -pthread_create(&s->thread, NULL, signal_main, s);
	s->started = rc == 0;
	return rc;
}

static void signals_stop(struct signals *s)
{
	if (!s->started)
		return;
	atomic_store(&s->loop_done, 1);
	/* wake the thread if no signal came: SIGTERM is in its set, and
	 * the loop is done, so it only returns */
	pthread_kill(s->thread, SIGTERM);
	pthread_join(s->thread, NULL);
}

/* ---- the session ------------------------------------------------------------------------ */

static int loop(struct fuse_session *se, const struct fuse_cmdline_opts *fo, int max_threads)
{
	struct fuse_loop_config *cfg;
	int rc;

	if (fo->singlethread)
		return fuse_session_loop(se);
	cfg = fuse_loop_cfg_create();
	if (!cfg)
		return -ENOMEM;
	fuse_loop_cfg_set_clone_fd(cfg, (unsigned)fo->clone_fd);
	if (fo->max_idle_threads != UINT_MAX)
		fuse_loop_cfg_set_idle_threads(cfg, fo->max_idle_threads);
	/* Every request holds the library's lock for its work, so workers
	 * beyond one add no concurrency, only handoffs between threads: on
	 * the 2-core machine of doc/BENCHMARKS.md, tar -x ran 1.9 times
	 * slower with libfuse's default (10) than with one, and two tar -x
	 * at once 1.3 times.  -o max_threads=N for more. */
	fuse_loop_cfg_set_max_threads(cfg, max_threads ? fo->max_threads : 1);
	rc = fuse_session_loop_mt(se, cfg);
	fuse_loop_cfg_destroy(cfg);
	return rc;
}

/* Mount, serve until unmounted or signalled, close; the exit status. */
static int serve(struct mount *m, struct fuse_session *se, const struct fuse_cmdline_opts *fo,
		 int max_threads)
{
	struct signals sig = { 0 };
	int rc, status = EXIT_OK;

	m->se = se;
	if (ctl_listen(m) || fuse_session_mount(se, m->mountpoint)) {
		ctl_stop(m);
		return close_image(m, EXIT_FAIL);
	}
	ctl_mounted(m);
	if (fuse_daemonize(fo->foreground)) {
		status = EXIT_FAIL;
		goto unmount;
	}
	if (!fo->foreground) {
		openlog("sufs-fuse", LOG_PID, LOG_DAEMON);
		to_syslog = 1;
	}
	rc = signals_start(&sig, se);
	if (!rc)
		rc = start_threads(m);
	if (rc) {
		note(m, LOG_ERR, "cannot start a thread: %s", strerror(-rc));
		status = EXIT_FAIL;
	} else if ((rc = loop(se, fo, max_threads)) < 0) {
		note(m, LOG_ERR, "%s: the session failed: %s", m->mountpoint, strerror(-rc));
		status = EXIT_FAIL;
	}
	signals_stop(&sig);
	stop_threads(m);
unmount:
	fuse_session_unmount(se);
	return close_image(m, status);
}

int main(int argc, char **argv)
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts fo;
	struct fuse_session *se = NULL;
	struct cmdline c = { 0 };
	struct mount m = { 0 };
	char path[PATH_MAX];
	uint64_t cache_bytes;
	int status = EXIT_USAGE;

	prog_init("sufs-fuse", argv);
	memset(&fo, 0, sizeof(fo));
	if (fuse_opt_parse(&args, &c, spec, opt_proc) == -1)
		goto out;
	if (c.help) {
		usage(stdout);
		printf("\nlibfuse's options:\n");
		fflush(stdout);
		fuse_lowlevel_help();
		status = EXIT_OK;
		goto out;
	}
	if (c.version) {
		print_version();
		status = EXIT_OK;
		goto out;
	}
	if (!c.image || !c.mountpoint || c.extra) {
		errmsg(c.extra ? "too many arguments" : "expects IMAGE and MOUNTPOINT");
		usage(stderr);
		goto out;
	}
	m.image = c.image;
	status = take_options(&c, &m, &cache_bytes);
	if (status)
		goto out;
	status = EXIT_MOUNTPOINT;
	if (!realpath(c.mountpoint, path)) {
		errmsg("%s: %s", shown(c.mountpoint), strerror(errno));
		goto out;
	}
	m.mountpoint = strdup(path);
	status = EXIT_USAGE;
	if (!m.mountpoint || add_mount_options(&args, c.image) ||
	    fuse_parse_cmdline(&args, &fo) == -1)
		goto out;
	/* the options libfuse does not know are refused here, before the
	 * image is touched */
	se = fuse_session_new(&args, &sufs_fuse_ops, sizeof(sufs_fuse_ops), &m);
	if (!se)
		goto out;
	status = open_mounted_image(&m, cache_bytes);
	if (!status)
		status = serve(&m, se, &fo, c.max_threads);
out:
	if (se)
		fuse_session_destroy(se);
	fuse_opt_free_args(&args);
	free(fo.mountpoint);
	free(m.mountpoint);
	free(c.image);
	free(c.mountpoint);
	free(c.mode);
	free(c.cache);
	free(c.dirty);
	free(c.age);
	free(c.timeout);
	free(c.bgthrottle);
	return status;
}
