/*
 * ctl.h - the control channel of a sufs-fuse daemon, both ends.
 *
 * A mounted image is written by its daemon alone (it holds the image's
 * write lock), so what else must change it goes through the daemon:
 * fsck.sufs -b and sufs-snap create, list, delete and export.  The channel
 * is a stream socket in the abstract namespace (no file to leave behind,
 * no directory to agree on), named from what the client is given:
 *
 *   an image file       "\0sufs-fuse/image/DEV:INO"  (its st_dev, st_ino)
 *   a block device      "\0sufs-fuse/blockdev/RDEV"  (its st_rdev)
 *   the mount point     "\0sufs-fuse/mount/DEV"      (the mount's st_dev)
 *
 * (numbers in hex).  Abstract names have no permissions: the daemon asks
 * the kernel who connected (SO_PEERCRED) and serves root and its own user
 * only (and "info", harmless, to anyone).
 *
 * The protocol is lines of words separated by single spaces; a byte of a
 * word that is a space or below, DEL, or '%' is written %XX.  The client
 * sends one request line and reads lines until "done RC", RC being 0 or
 * the library's negative error code:
 *
 *   info                  -> info PID MODE MOUNTPOINT IMAGE
 *   check FLAGS THROTTLE  -> pass N NAME | progress PASS DONE TOTAL |
 *                            problem CODE MESSAGE ... then
 *                            result STATUS SKIPPED HALTED MODIFIED PROBLEMS
 *                              FIXED LEAKS NONLEAKS INODES_USED INODES_COUNT
 *                              DIRS BLOCKS_USED BLOCKS_COUNT
 *                            or refused WHY
 *   snap-create NAME      -> snap NAME SLOT INO TIME BLOCKS BROKEN
 *   snap-list             -> snap ... (one a snapshot, oldest first)
 *   snap-delete NAME      -> (nothing but done)
 *   snap-export NAME      -> (with an open file passed, SCM_RIGHTS)
 *                            size BLOCK_SIZE BLOCKS, progress 0 DONE TOTAL ...
 *
 * and "done RC [WHERE]" last.  A line "cancel", or the client closing its
 * end, stops a check (status 32) or an export (-EINTR).  man/sufs-fuse.8
 * describes the same for users.
 */
#ifndef SUFS_CTL_H
#define SUFS_CTL_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>

#define CTL_MAX_WORDS 24
#define CTL_LINE_MAX 8192

struct ctl {
	int fd;
	int passed_fd;             /* a descriptor that came with a line, or -1 */
	char buf[CTL_LINE_MAX];
	size_t start, end;
};

/* The socket's name for an image (a regular file or a block device), or
 * for a mount (its st_dev): 0, or -EINVAL for anything else. */
int ctl_image_name(const struct stat *st, struct sockaddr_un *sa, socklen_t *len);
void ctl_mount_name(dev_t dev, struct sockaddr_un *sa, socklen_t *len);

/*
 * Connect to the daemon serving path: an image, or the mount point of a
 * sufs-fuse mount (the root of the mount, not a directory in it).
 * 0; -ENOENT when no daemon serves it (not mounted, or not a mount
 * point); another negative errno when path cannot be looked at.
 */
int ctl_connect(const char *path, struct ctl *c);
/* Take a connection accepted on a listening socket. */
void ctl_init(struct ctl *c, int fd);
void ctl_close(struct ctl *c);

/* Send one line: the words (NULL-terminated), escaped; with passfd >= 0,
 * that descriptor too.  0 or a negative errno. */
int ctl_send(struct ctl *c, int passfd, const char *word, ...)
	__attribute__((sentinel));
/*
 * The next line, split into its words (unescaped, NUL-terminated, in c's
 * buffer until the next call): their count, 0 at the end of the stream,
 * -ETIMEDOUT after timeout_ms (-1: wait as long as it takes), -EINTR when
 * a signal came, -EPROTO for a line too long, another negative errno.
 */
int ctl_recv(struct ctl *c, char **words, int max, int timeout_ms);
/* Whether the other end sent something or went away (a client's cancel). */
int ctl_peer_spoke(struct ctl *c);

/* What a read-only program should know of an image a daemon serves:
 * 1 and *pid and *mountpoint (malloc()ed) if one does, else 0. */
int ctl_mounted_info(const char *image, long *pid, char **mountpoint);
/*
 * For the programs that only read an image: a warning when another
 * program writes it (a sufs-fuse daemon, said so, with its mount point;
 * or any writer holding the image's lock), since what they read may then
 * be out of date.
 */
void ctl_warn_if_live(const char *image);

#endif
