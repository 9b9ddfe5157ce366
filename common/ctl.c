/*
 * ctl.c - the control channel of a sufs-fuse daemon: names, lines, and
 * what a read-only program says of an image someone writes (ctl.h).
 */
#include "config.h"

#include "ctl.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define SUFS_ROOT_INO 2 /* sufs.h's: the mount's root reports it as st_ino */

/* ---- names ------------------------------------------------------------------------ */

static void set_name(struct sockaddr_un *sa, socklen_t *len, const char *name)
{
	size_t n = strlen(name);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	/* abstract: a NUL, then the name, not NUL-terminated */
	memcpy(sa->sun_path + 1, name, n);
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

int ctl_image_name(const struct stat *st, struct sockaddr_un *sa, socklen_t *len)
{
	char name[96];

	if (S_ISBLK(st->st_mode))
		snprintf(name, sizeof(name), "sufs-fuse/blockdev/%jx", (uintmax_t)st->st_rdev);
	else if (S_ISREG(st->st_mode))
		snprintf(name, sizeof(name), "sufs-fuse/image/%jx:%jx", (uintmax_t)st->st_dev,
			 (uintmax_t)st->st_ino);
	else
		return -EINVAL;
	set_name(sa, len, name);
	return 0;
}

void ctl_mount_name(dev_t dev, struct sockaddr_un *sa, socklen_t *len)
{
	char name[64];

	snprintf(name, sizeof(name), "sufs-fuse/mount/%jx", (uintmax_t)dev);
	set_name(sa, len, name);
}

/* ---- connections -------------------------------------------------------------------- */

void ctl_init(struct ctl *c, int fd)
{
	c->fd = fd;
	c->passed_fd = -1;
	c->start = c->end = 0;
}

void ctl_close(struct ctl *c)
{
	if (c->fd >= 0)
		close(c->fd);
	if (c->passed_fd >= 0)
		close(c->passed_fd);
	c->fd = c->passed_fd = -1;
}

#define FUSE_SUPER_MAGIC 0x65735546
#define MOUNT_WAIT_TRIES 40        /* of 50 ms: a mount just made */

int ctl_connect(const char *path, struct ctl *c)
{
	struct sockaddr_un sa;
	struct statfs sfs;
	socklen_t len;
	struct stat st;
	int fd, err, tries = 0, fresh = 0;

	ctl_init(c, -1);
	if (stat(path, &st))
		return -errno;
	if (S_ISDIR(st.st_mode)) {
		/* the root of a sufs mount answers with sufs's root inode */
		if (st.st_ino != SUFS_ROOT_INO)
			return -ENOENT;
		ctl_mount_name(st.st_dev, &sa, &len);
		/* the daemon names the channel after its mount, which is
		 * seen first: a FUSE mount's channel may be a moment away */
		fresh = statfs(path, &sfs) == 0 && sfs.f_type == FUSE_SUPER_MAGIC;
	} else if (ctl_image_name(&st, &sa, &len)) {
		return -ENOENT;
	}
	for (;;) {
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return -errno;
		if (connect(fd, (struct sockaddr *)&sa, len) == 0)
			break;
		err = errno == ECONNREFUSED ? -ENOENT : -errno;
		close(fd);
		if (!fresh || err != -ENOENT || ++tries == MOUNT_WAIT_TRIES)
			return err;
		usleep(50000);
	}
	ctl_init(c, fd);
	return 0;
}

/* ---- lines ---------------------------------------------------------------------------- */

static int plain(unsigned char ch)
{
	return ch > ' ' && ch != 0x7f && ch != '%';
}

int ctl_send(struct ctl *c, int passfd, const char *word, ...)
{
	char line[CTL_LINE_MAX], cmsgbuf[CMSG_SPACE(sizeof(int))];
	struct msghdr msg = { 0 };
	struct iovec iov;
	size_t n = 0;
	const char *w;
	ssize_t sent;
	va_list ap;

	va_start(ap, word);
	for (w = word; w; w = va_arg(ap, const char *)) {
		if (w != word)
			line[n++] = ' ';
		for (; *w; w++) {
			if (n + 4 >= sizeof(line)) {
				va_end(ap);
				return -EMSGSIZE;
			}
			if (plain((unsigned char)*w))
				line[n++] = *w;
			else
				n += (size_t)sprintf(line + n, "%%%02X", (unsigned char)*w);
		}
	}
	va_end(ap);
	line[n++] = '\n';
	iov.iov_base = line;
	iov.iov_len = n;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	if (passfd >= 0) {
		struct cmsghdr *cm;
		msg.msg_control = cmsgbuf;
		msg.msg_controllen = sizeof(cmsgbuf);
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &passfd, sizeof(int));
	}
	/* the other end may be gone: an error, not SIGPIPE */
	do
		sent = sendmsg(c->fd, &msg, MSG_NOSIGNAL);
	while (sent < 0 && errno == EINTR);
	if (sent < 0)
		return -errno;
	return (size_t)sent == n ? 0 : -EIO; /* lines are short: sent whole */
}

/* Split a line (NUL-terminated, no newline) into words, unescaped in place. */
static int split(char *line, char **words, int max)
{
	char *r = line, *w = line;
	int n = 0;

	while (*r && n < max) {
		words[n++] = w;
		while (*r && *r != ' ') {
			if (r[0] == '%' && hex_digit(r[1]) >= 0 && hex_digit(r[2]) >= 0) {
				*w++ = (char)(hex_digit(r[1]) << 4 | hex_digit(r[2]));
				r += 3;
			} else {
				*w++ = *r++;
			}
		}
		if (*r == ' ')
			r++;
		*w++ = 0;
	}
	return n;
}

/* Read more into the buffer (and a descriptor that comes with it). */
static int fill(struct ctl *c, int timeout_ms)
{
	char cmsgbuf[CMSG_SPACE(sizeof(int))];
	struct msghdr msg = { 0 };
	struct pollfd p = { c->fd, POLLIN, 0 };
	struct iovec iov;
	struct cmsghdr *cm;
	ssize_t got;
	int rc;

	if (c->start > 0) {
		memmove(c->buf, c->buf + c->start, c->end - c->start);
		c->end -= c->start;
		c->start = 0;
	}
	if (c->end == sizeof(c->buf))
		return -EPROTO;
	rc = poll(&p, 1, timeout_ms);
	if (rc < 0)
		return -errno;
	if (rc == 0)
		return -ETIMEDOUT;
	iov.iov_base = c->buf + c->end;
	iov.iov_len = sizeof(c->buf) - c->end;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cmsgbuf;
	msg.msg_controllen = sizeof(cmsgbuf);
	got = recvmsg(c->fd, &msg, MSG_CMSG_CLOEXEC);
	if (got < 0)
		return -errno;
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
			if (c->passed_fd >= 0)
				close(c->passed_fd);
			memcpy(&c->passed_fd, CMSG_DATA(cm), sizeof(int));
		}
	}
	c->end += (size_t)got;
	return got > 0;
}

int ctl_recv(struct ctl *c, char **words, int max, int timeout_ms)
{
	char *nl;
	int rc;

	for (;;) {
		nl = memchr(c->buf + c->start, '\n', c->end - c->start);
		if (nl) {
			char *line = c->buf + c->start;
			*nl = 0;
			c->start = (size_t)(nl + 1 - c->buf);
			if (memchr(line, 0, (size_t)(nl - line)))
				return -EPROTO;
			rc = split(line, words, max);
			if (rc)
				return rc;
			continue; /* an empty line says nothing */
		}
		rc = fill(c, timeout_ms);
		if (rc < 0)
			return rc;
		if (rc == 0)
			return c->end > c->start ? -EPROTO : 0; /* the end, maybe mid-line */
	}
}

int ctl_peer_spoke(struct ctl *c)
{
	struct pollfd p = { c->fd, POLLIN, 0 };

	return c->end > c->start || (poll(&p, 1, 0) == 1 && p.revents);
}

/* ---- what read-only programs say ------------------------------------------------------ */

int ctl_mounted_info(const char *image, long *pid, char **mountpoint)
{
	char *w[CTL_MAX_WORDS];
	struct ctl c;
	int n, found = 0;

	if (ctl_connect(image, &c))
		return 0;
	if (ctl_send(&c, -1, "info", NULL) == 0) {
		while ((n = ctl_recv(&c, w, CTL_MAX_WORDS, 5000)) > 0) {
			if (!strcmp(w[0], "info") && n >= 4 && !found) {
				*pid = strtol(w[1], NULL, 10);
				*mountpoint = strdup(w[3]);
				found = *mountpoint != NULL;
			}
			if (!strcmp(w[0], "done"))
				break;
		}
	}
	ctl_close(&c);
	return found;
}

/* Whether a program holds the image's write lock (an flock, as libsufs
 * takes it): read from /proc/locks, without taking a lock ourselves (which
 * could make a writer starting that moment fail). */
static int write_locked(const char *image)
{
	struct stat st;
	unsigned maj, min;
	unsigned long long ino;
	char line[256], kind[16], mode[16];
	int found = 0;
	FILE *f;

	if (stat(image, &st) || !(f = fopen("/proc/locks", "re")))
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		/* "1: FLOCK  ADVISORY  WRITE 1234 fe:01:5678 0 EOF"; a lock
		 * waiting for one has "->" after the number */
		if (strstr(line, "->") ||
		    sscanf(line, "%*s %15s %*s %15s %*d %x:%x:%llu", kind, mode, &maj, &min, &ino) != 5)
			continue;
		found = !strcmp(kind, "FLOCK") && !strcmp(mode, "WRITE") &&
			maj == major(st.st_dev) && min == minor(st.st_dev) && ino == st.st_ino;
	}
	fclose(f);
	return found;
}

void ctl_warn_if_live(const char *image)
{
	char *mountpoint;
	long pid;

	if (ctl_mounted_info(image, &pid, &mountpoint)) {
		warnmsg("%s is mounted on %s (sufs-fuse, pid %ld): what is read may be "
			"out of date", shown(image), shown(mountpoint), pid);
		free(mountpoint);
	} else if (write_locked(image)) {
		warnmsg("%s is open for writing by another program: what is read may be "
			"out of date", shown(image));
	}
}
