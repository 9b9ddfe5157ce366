/*
 * ctl.c - the daemon's end of the control channel, and the background
 * check after a crash.
 *
 * One thread serves the channel (common/ctl.h has the protocol), one
 * client at a time, so that two checks, or a check and a snapshot's
 * deletion, never run together.  When the image was not unmounted
 * cleanly, another thread runs the background check first (FreeBSD's
 * background fsck at boot, made live): a snapshot is checked for leaks
 * while the mount is in use, and what it found is freed on the live file
 * system; the channel answers "info" meanwhile, and every other request
 * once it is done.  Until then the image stays in softdep mode, the only
 * one the check takes; then it goes to the mode asked for.
 *
 * The library's rules hold here as in the request handlers: every call
 * under sufs_lock(), but for the background check and the snapshot's view
 * (its reads), which take the lock themselves.  Snapshots change /.snap
 * behind the kernel's back, which is why ops.c lets the kernel cache
 * nothing there; the check lowers link counts behind it too, so the
 * kernel is told to read again the attributes of the inodes it reported.
 */
#include "config.h"

#include "ctl-server.h"
#include "ctl.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

struct ctl_server {
	int listen[2];             /* the image's name, the mount's name; -1: none */
	int wake[2];               /* a pipe, written to stop the thread */
	pthread_t thread;
	int started;
	/* the check after a crash, in a thread of its own, so that "info"
	 * is answered meanwhile; the other requests wait for its end */
	pthread_t bg;
	int bg_started;
	pthread_mutex_t bg_lock;
	pthread_cond_t bg_done;
	int bg_running;
};

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- listening ------------------------------------------------------------------------ */

static int listen_on(const struct sockaddr_un *sa, socklen_t len)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), err;

	if (fd < 0)
		return -errno;
	if (bind(fd, (const struct sockaddr *)sa, len) || listen(fd, 8)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int ctl_listen(struct mount *m)
{
	struct ctl_server *s = calloc(1, sizeof(*s));
	struct sockaddr_un sa;
	socklen_t len;
	struct stat st;
	int fd;

	if (!s) {
		errmsg("out of memory");
		return -1;
	}
	s->listen[0] = s->listen[1] = s->wake[0] = s->wake[1] = -1;
	m->ctl = s;
	if (stat(m->image, &st) || ctl_image_name(&st, &sa, &len))
		return 0; /* the image was opened: it is one */
	fd = listen_on(&sa, len);
	if (fd == -EADDRINUSE) {
		/* another daemon has it mounted (read-only, or in another
		 * mount namespace): that one answers for it */
		warnmsg("%s: another sufs-fuse answers for this image: fsck.sufs -b and "
			"sufs-snap reach that one", shown(m->image));
		return 0;
	}
	if (fd < 0) {
		errmsg("%s: the control channel: %s", shown(m->image), strerror(-fd));
		return -1;
	}
	s->listen[0] = fd;
	return 0;
}

/* An octal escape of /proc/self/mountinfo ("\040" a space) undone in place. */
static void unescape_octal(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = 0;
}

/* The device number of the newest mount on path, from /proc/self/mountinfo
 * (a stat() of the mount point would be a request to ourselves, which
 * nobody serves yet): 0, or -1. */
static int mount_dev(const char *path, dev_t *dev)
{
	char line[3 * PATH_MAX], mnt[2 * PATH_MAX];
	unsigned maj, min;
	int found = -1;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*d %*d %u:%u %*s %8191s", &maj, &min, mnt) != 3)
			continue;
		unescape_octal(mnt);
		if (!strcmp(mnt, path)) {
			*dev = makedev(maj, min);
			found = 0; /* the last line for it is the mount on top */
		}
	}
	fclose(f);
	return found;
}

void ctl_mounted(struct mount *m)
{
	struct sockaddr_un sa;
	socklen_t len;
	dev_t dev;
	int fd;

	if (mount_dev(m->mountpoint, &dev)) {
		warnmsg("%s: cannot find the mount in /proc/self/mountinfo: fsck.sufs -b and "
			"sufs-snap reach it by the image's name only", shown(m->mountpoint));
		return;
	}
	ctl_mount_name(dev, &sa, &len);
	fd = listen_on(&sa, len);
	if (fd < 0)
		warnmsg("%s: the control channel: %s", shown(m->mountpoint), strerror(-fd));
	else
		m->ctl->listen[1] = fd;
}

/* ---- a check ------------------------------------------------------------------------------ */

/* What a check reports as it goes, to the client (if any), and which
 * inodes it named. */
struct job {
	struct mount *m;
	struct ctl *client;        /* NULL: the check after a crash */
	double last_progress, last_poll;
	int cancelled;
	uint32_t *inos;
	size_t ninos, capinos;
	unsigned logged;           /* problems found (the check after a crash) */
};

#define LOG_PROBLEMS 10

static void job_report(void *arg, const struct sufs_problem *p, int fixed)
{
	struct job *j = arg;
	char code[16];

	(void)fixed;
	if (p->ino && j->ninos < 65536) {
		if (j->ninos == j->capinos) {
			size_t cap = j->capinos ? 2 * j->capinos : 64;
			uint32_t *q = realloc(j->inos, cap * sizeof(*q));
			if (q) {
				j->inos = q;
				j->capinos = cap;
			}
		}
		if (j->ninos < j->capinos)
			j->inos[j->ninos++] = p->ino;
	}
	if (!j->client) {
		/* the first few in the log, then how many more (leaks all) */
		if (j->logged++ < LOG_PROBLEMS)
			note(j->m, LOG_INFO, "%s: background check: %s", j->m->image, p->message);
		return;
	}
	snprintf(code, sizeof(code), "%u", p->def->code);
	ctl_send(j->client, -1, "problem", code, p->message, NULL);
}

static void job_pass(void *arg, unsigned pass, const char *name)
{
	struct job *j = arg;
	char n[16];

	if (!j->client)
		return;
	snprintf(n, sizeof(n), "%u", pass);
	ctl_send(j->client, -1, "pass", n, name, NULL);
}

/* Progress, at most twenty lines a second (and each pass's end). */
static void job_progress(void *arg, unsigned pass, uint64_t done, uint64_t total)
{
	struct job *j = arg;
	char p[16], d[24], t[24];
	double now;

	if (!j->client)
		return;
	now = seconds();
	if (done != total && now - j->last_progress < 0.05)
		return;
	j->last_progress = now;
	snprintf(p, sizeof(p), "%u", pass);
	snprintf(d, sizeof(d), "%" PRIu64, done);
	snprintf(t, sizeof(t), "%" PRIu64, total);
	ctl_send(j->client, -1, "progress", p, d, t, NULL);
}

/* Stop when the daemon stops, or when the client says so (or leaves). */
static int job_cancelled(void *arg)
{
	struct job *j = arg;
	double now;

	if (atomic_load(&j->m->stopping))
		return 1;
	if (j->client && !j->cancelled) {
		now = seconds();
		if (now - j->last_poll >= 0.05) {
			j->last_poll = now;
			j->cancelled = ctl_peer_spoke(j->client);
		}
	}
	return j->cancelled;
}

/* The kernel reads again the attributes of what the check named (a link
 * count lowered): only of inodes it knows, and never while stopping (the
 * session is going). */
static void invalidate(struct job *j)
{
	struct mount *m = j->m;
	size_t i;
	int known;

	for (i = 0; i < j->ninos && !atomic_load(&m->stopping); i++) {
		sufs_lock(m->fs);
		known = nodes_known(&m->nodes, j->inos[i]);
		sufs_unlock(m->fs);
		if (known)
			fuse_lowlevel_notify_inval_inode(m->se, node_of(j->inos[i]), -1, 0);
	}
}

/* Why the library would refuse a background check now, or NULL. */
static const char *refusal(struct mount *m, char *buf, size_t size)
{
	const struct sufs_super *sb;
	const char *why = NULL;

	sufs_lock(m->fs);
	sb = sufs_get_super(m->fs);
	if (m->readonly) {
		why = "it is mounted read-only";
	} else if (sb->flags & SUFS_FLAG_NEEDS_FSCK) {
		why = "it is flagged as needing a full check";
	} else if (sb->write_mode != SUFS_MODE_SOFTDEP) {
		snprintf(buf, size, "its write mode is %s (the background check needs softdep)",
			 sufs_mode_name(sb->write_mode));
		why = buf;
	}
	sufs_unlock(m->fs);
	return why;
}

/* Run the background check; the library's return code. */
static int run_check(struct job *j, unsigned flags, uint32_t throttle,
		     struct sufs_check_result *r)
{
	struct sufs_check_opts o = { 0 };
	int rc;

	o.flags = flags & SUFS_CHECK_NO; /* the rest is the client's to decide */
	o.throttle_kib = throttle;
	o.report = job_report;
	o.pass = job_pass;
	o.progress = job_progress;
	o.cancelled = job_cancelled;
	o.arg = j;
	j->last_poll = seconds();
	rc = sufs_check_background(j->m->fs, &o, r);
	invalidate(j);
	return rc;
}

/* After a crash: the check, its outcome in the log, then the mode asked for. */
static void check_after_crash(struct mount *m)
{
	struct job j = { .m = m };
	struct sufs_check_result r;
	char buf[128];
	const char *why = refusal(m, buf, sizeof(buf));
	int rc;

	if (why) {
		note(m, LOG_WARNING, "%s: not unmounted cleanly, and no background check: %s; "
		     "run fsck.sufs -f once it is unmounted", m->image, why);
	} else {
		note(m, LOG_INFO, "%s: not unmounted cleanly: checking it in the background",
		     m->image);
		rc = run_check(&j, 0, m->throttle_kib, &r);
		if (j.logged > LOG_PROBLEMS)
			note(m, LOG_INFO, "%s: background check: %u problems more", m->image,
			     j.logged - LOG_PROBLEMS);
		if (rc)
			note(m, LOG_ERR, "%s: background check: %s", m->image, sufs_strerror(rc));
		else if (r.status & SUFS_EXIT_CANCELLED)
			note(m, LOG_INFO, "%s: background check interrupted", m->image);
		else if (r.status & SUFS_EXIT_UNCORRECTED)
			note(m, LOG_ERR, "%s: background check: damage worse than leaks; the image "
			     "is flagged: run fsck.sufs -f once it is unmounted", m->image);
		else
			note(m, LOG_INFO, "%s: background check done: %u leak%s freed", m->image,
			     r.fixed, r.fixed == 1 ? "" : "s");
	}
	free(j.inos);
	if (m->mode != SUFS_MODE_SOFTDEP && !atomic_load(&m->stopping)) {
		sufs_lock(m->fs);
		rc = sufs_set_mode(m->fs, m->mode);
		sufs_unlock(m->fs);
		if (rc)
			note(m, LOG_ERR, "%s: going to %s mode: %s", m->image,
			     sufs_mode_name(m->mode), sufs_strerror(rc));
	}
}

/* ---- the commands ---------------------------------------------------------------------- */

static void send_done(struct ctl *c, int rc, const char *where)
{
	char n[16];

	snprintf(n, sizeof(n), "%d", rc);
	ctl_send(c, -1, "done", n, where, NULL);
}

static void cmd_info(struct mount *m, struct ctl *c)
{
	char pid[24];

	snprintf(pid, sizeof(pid), "%ld", (long)getpid());
	ctl_send(c, -1, "info", pid, m->readonly ? "ro" : sufs_mode_name(m->mode),
		 m->mountpoint, m->image, NULL);
	send_done(c, 0, NULL);
}

static void send_result(struct ctl *c, const struct sufs_check_result *r)
{
	char v[13][24];

	snprintf(v[0], 24, "%d", r->status);
	snprintf(v[1], 24, "%d", r->skipped);
	snprintf(v[2], 24, "%d", r->halted);
	snprintf(v[3], 24, "%d", r->modified);
	snprintf(v[4], 24, "%u", r->problems);
	snprintf(v[5], 24, "%u", r->fixed);
	snprintf(v[6], 24, "%u", r->leaks);
	snprintf(v[7], 24, "%u", r->nonleaks);
	snprintf(v[8], 24, "%" PRIu32, r->inodes_used);
	snprintf(v[9], 24, "%" PRIu32, r->inodes_count);
	snprintf(v[10], 24, "%" PRIu32, r->dirs);
	snprintf(v[11], 24, "%" PRIu64, r->blocks_used);
	snprintf(v[12], 24, "%" PRIu64, r->blocks_count);
	ctl_send(c, -1, "result", v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9],
		 v[10], v[11], v[12], NULL);
}

/* check FLAGS THROTTLE: fsck.sufs -b on the mounted image. */
static void cmd_check(struct mount *m, struct ctl *c, char **w, int n)
{
	struct job j = { .m = m, .client = c };
	struct sufs_check_result r;
	const struct sufs_super *sb;
	uint32_t flags = 0, throttle = 0;
	char buf[128];
	const char *why;
	int rc;

	if (n != 3 || parse_u32(w[1], &flags) || parse_u32(w[2], &throttle)) {
		send_done(c, -EINVAL, "the request");
		return;
	}
	why = refusal(m, buf, sizeof(buf));
	if (why) {
		ctl_send(c, -1, "refused", why, NULL);
		send_done(c, -SUFS_EBGREFUSED, NULL);
		return;
	}
	rc = run_check(&j, flags, throttle, &r);
	free(j.inos);
	if (rc == -SUFS_EBGREFUSED) {
		ctl_send(c, -1, "refused", "the library refused it", NULL);
		send_done(c, rc, NULL);
		return;
	}
	/* as fsck.sufs -b reports a check of its own: halted at anything
	 * worse than a leak, and the live file system's counts */
	if (!rc && r.nonleaks)
		r.halted = 1;
	sufs_lock(m->fs);
	sb = sufs_get_super(m->fs);
	r.inodes_count = sb->inodes_count;
	r.inodes_used = sb->inodes_count - sb->free_inodes;
	r.blocks_count = sb->blocks_count;
	r.blocks_used = sb->blocks_count - sb->free_blocks;
	sufs_unlock(m->fs);
	send_result(c, &r);
	send_done(c, rc, r.error_where);
}

static void send_snap(struct ctl *c, const struct sufs_snap_info *s)
{
	char slot[16], ino[16], t[24], blocks[24];

	snprintf(slot, sizeof(slot), "%u", s->slot);
	snprintf(ino, sizeof(ino), "%" PRIu32, s->ino);
	snprintf(t, sizeof(t), "%" PRId64, s->time);
	snprintf(blocks, sizeof(blocks), "%" PRIu64, s->blocks);
	ctl_send(c, -1, "snap", s->name, slot, ino, t, blocks, s->broken ? "1" : "0", NULL);
}

/* What a name that is taken is (for sufs-snap's message): a snapshot, a
 * file an interrupted create left, or something else.  Under the lock. */
static const char *taken_by(struct mount *m, const char *name)
{
	struct sufs_snap_info info;
	struct sufs_inode in;
	uint32_t dir, ino;

	if (sufs_snap_find(m->fs, name, &info) == 0)
		return "snapshot";
	if (sufs_lookup(m->fs, SUFS_ROOT_INO, ".snap", 5, &dir) == 0 &&
	    sufs_lookup(m->fs, dir, name, strlen(name), &ino) == 0 &&
	    sufs_inode_get(m->fs, ino, &in) == 0 && (in.flags & SUFS_IFLAG_SNAPSHOT))
		return "leftover";
	return "other";
}

static void cmd_snap_create(struct mount *m, struct ctl *c, const char *name)
{
	struct sufs_snap_info info;
	const char *detail = NULL;
	int rc;

	sufs_lock(m->fs);
	rc = m->readonly ? -EROFS : sufs_snap_create(m->fs, name, &info);
	if (rc == -EEXIST)
		detail = taken_by(m, name);
	sufs_unlock(m->fs);
	if (!rc)
		send_snap(c, &info);
	send_done(c, rc, detail);
}

static void cmd_snap_list(struct mount *m, struct ctl *c)
{
	struct sufs_snap_info s[SUFS_SNAP_SLOTS];
	unsigned n = 0, i;
	int rc;

	sufs_lock(m->fs);
	rc = sufs_snap_list(m->fs, s, &n);
	sufs_unlock(m->fs);
	for (i = 0; !rc && i < n; i++)
		send_snap(c, &s[i]);
	send_done(c, rc, NULL);
}

static void cmd_snap_delete(struct mount *m, struct ctl *c, const char *name)
{
	int rc;

	sufs_lock(m->fs);
	rc = m->readonly ? -EROFS : sufs_snap_delete(m->fs, name);
	sufs_unlock(m->fs);
	send_done(c, rc, NULL);
}

/* Copy the blocks the view has in use into fd (holes elsewhere), with
 * progress; the view's reads take the lock themselves. */
static int copy_view(struct mount *m, struct ctl *c, struct sufs_dev *view, int fd,
		     uint32_t bs, uint64_t blocks, const char **where)
{
	struct job j = { .m = m, .client = c };
	uint8_t *buf = malloc(bs);
	uint64_t blk;
	int rc = 0, used;

	if (!buf)
		return -ENOMEM;
	if (ftruncate(fd, (off_t)(blocks * bs))) {
		*where = "sizing the output";
		free(buf);
		return -errno;
	}
	for (blk = 0; blk < blocks && !rc; blk++) {
		if (job_cancelled(&j)) {
			rc = -EINTR;
			break;
		}
		job_progress(&j, 0, blk, blocks);
		rc = sufs_snap_block_used(view, blk, &used);
		if (rc) {
			*where = "reading the view's bitmap";
			break;
		}
		if (!used)
			continue;
		rc = sufs_dev_read(view, blk * bs, buf, bs);
		if (rc) {
			*where = "reading the view";
			break;
		}
		if (pwrite(fd, buf, bs, (off_t)(blk * bs)) != (ssize_t)bs) {
			rc = errno ? -errno : -EIO;
			*where = "writing the output";
		}
	}
	if (!rc)
		job_progress(&j, 0, blocks, blocks);
	free(buf);
	return rc;
}

/* snap-export NAME, with the output (a temporary file the client made)
 * passed along: the client puts it in place. */
static void cmd_snap_export(struct mount *m, struct ctl *c, const char *name)
{
	struct sufs_snap_info info;
	struct sufs_dev *view = NULL;
	struct sufs_fs *vfs = NULL;
	const char *where = NULL;
	char bs[16], blocks[24];
	int rc;

	if (c->passed_fd < 0) {
		send_done(c, -EBADF, "the request");
		return;
	}
	sufs_lock(m->fs);
	rc = sufs_snap_find(m->fs, name, &info);
	if (!rc && !info.broken)
		rc = sufs_snap_open_dev(m->fs, name, &view);
	sufs_unlock(m->fs);
	if (!rc)
		send_snap(c, &info);
	if (rc || info.broken) {
		send_done(c, rc, rc ? "read" : NULL);
		return;
	}
	rc = sufs_open_dev(view, 0, 0, &vfs);
	if (rc) {
		sufs_dev_close(view);
		send_done(c, rc, "view");
		return;
	}
	snprintf(bs, sizeof(bs), "%" PRIu32, sufs_get_super(vfs)->block_size);
	snprintf(blocks, sizeof(blocks), "%" PRIu64, sufs_get_super(vfs)->blocks_count);
	ctl_send(c, -1, "size", bs, blocks, NULL);
	rc = copy_view(m, c, view, c->passed_fd, sufs_get_super(vfs)->block_size,
		       sufs_get_super(vfs)->blocks_count, &where);
	sufs_close(vfs); /* and the view */
	send_done(c, rc, where);
}

/* Root, and the daemon's own user, may change the image; "info" is for
 * anyone. */
static int allowed(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 &&
	       (cred.uid == 0 || cred.uid == geteuid());
}

/* Wait for the check after a crash to end: one check at a time, and a
 * snapshot taken or deleted only once the image is checked. */
static void after_check(struct ctl_server *s)
{
	pthread_mutex_lock(&s->bg_lock);
	while (s->bg_running)
		pthread_cond_wait(&s->bg_done, &s->bg_lock);
	pthread_mutex_unlock(&s->bg_lock);
}

static void serve_client(struct mount *m, int fd)
{
	char *w[CTL_MAX_WORDS];
	struct ctl c;
	int n;

	ctl_init(&c, fd);
	n = ctl_recv(&c, w, CTL_MAX_WORDS, 5000);
	if (n <= 0) {
		ctl_close(&c);
		return;
	}
	if (!strcmp(w[0], "info")) {
		cmd_info(m, &c);
		ctl_close(&c);
		return;
	}
	after_check(m->ctl);
	if (!allowed(fd))
		send_done(&c, -EPERM, NULL);
	else if (!strcmp(w[0], "check"))
		cmd_check(m, &c, w, n);
	else if (!strcmp(w[0], "snap-create") && n == 2)
		cmd_snap_create(m, &c, w[1]);
	else if (!strcmp(w[0], "snap-list") && n == 1)
		cmd_snap_list(m, &c);
	else if (!strcmp(w[0], "snap-delete") && n == 2)
		cmd_snap_delete(m, &c, w[1]);
	else if (!strcmp(w[0], "snap-export") && n == 2)
		cmd_snap_export(m, &c, w[1]);
	else
		send_done(&c, -EINVAL, "the request");
	ctl_close(&c);
}

/* ---- the thread ---------------------------------------------------------------------------- */

static void *bg_main(void *arg)
{
	struct mount *m = arg;
	struct ctl_server *s = m->ctl;

	check_after_crash(m);
	pthread_mutex_lock(&s->bg_lock);
	s->bg_running = 0;
	pthread_cond_broadcast(&s->bg_done);
	pthread_mutex_unlock(&s->bg_lock);
	return NULL;
}

static void *ctl_main(void *arg)
{
	struct mount *m = arg;
	struct ctl_server *s = m->ctl;
	struct pollfd p[3];
	int i, fd;

	for (i = 0; i < 2; i++)
		p[i] = (struct pollfd){ s->listen[i], POLLIN, 0 };
	p[2] = (struct pollfd){ s->wake[0], POLLIN, 0 };
	while (!atomic_load(&m->stopping)) {
		if (poll(p, 3, -1) < 0)
			continue; /* EINTR */
		for (i = 0; i < 2 && !atomic_load(&m->stopping); i++) {
			if (!(p[i].revents & POLLIN))
				continue;
			fd = accept4(s->listen[i], NULL, NULL, SOCK_CLOEXEC);
			if (fd >= 0)
				serve_client(m, fd);
		}
	}
	return NULL;
}

int ctl_start(struct mount *m, int (*start)(pthread_t *, void *(*)(void *), void *))
{
	struct ctl_server *s = m->ctl;
	int rc;

	if (pipe2(s->wake, O_CLOEXEC))
		return -errno;
	pthread_mutex_init(&s->bg_lock, NULL);
	pthread_cond_init(&s->bg_done, NULL);
	if (m->bgcheck) {
		s->bg_running = 1;
		rc = start(&s->bg, bg_main, m);
		s->bg_started = rc == 0;
		if (rc)
			return rc;
	}
	rc = start(&s->thread, ctl_main, m);
	s->started = rc == 0;
	return rc;
}

void ctl_stop(struct mount *m)
{
	struct ctl_server *s = m->ctl;
	int i;

	if (!s)
		return;
	/* m->stopping is set: a check or an export under way stops */
	if (s->bg_started)
		pthread_join(s->bg, NULL);
	if (s->started) {
		if (write(s->wake[1], "x", 1) < 0)
			note(m, LOG_ERR, "stopping the control channel: %s", strerror(errno));
		pthread_join(s->thread, NULL);
	}
	for (i = 0; i < 2; i++) {
		if (s->listen[i] >= 0)
			close(s->listen[i]);
		if (s->wake[i] >= 0)
			close(s->wake[i]);
	}
	free(s);
	m->ctl = NULL;
}
