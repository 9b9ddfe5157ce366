/*
 * commands.h - the command table of sufs-debug and what its commands share.
 *
 * Every command is one row of commands[]: its name, other names, a usage
 * line for its arguments, a line of help and the function that runs it.
 * The shell (main.c) only splits a line into words and looks the first one
 * up here; adding a command is adding a row.
 *
 * A handler returns 0 when it did what was asked and 1 when it did not,
 * after saying why on stderr as "sufs-debug: COMMAND ARGUMENT: reason".
 */
#ifndef SUFS_DEBUG_COMMANDS_H
#define SUFS_DEBUG_COMMANDS_H

#include <stdint.h>
#include <stdio.h>

#include "sufs.h"

/* One open image and where the user stands in it. */
struct session {
	struct sufs_fs *fs;
	const char *image;
	int writable;              /* opened with -w */
	uint32_t cwd;              /* inode of the current directory */
	int quit;                  /* set by `quit`: read no more commands */
	struct edits *edits;       /* edit.c: edits made on the image after the close */
	int fixed_time;            /* SOURCE_DATE_EPOCH: the clock of new timestamps */
	int64_t time_sec;
	uint64_t sb_offset;        /* -s: the backup superblock opened from, else 0 */
	int catastrophic;          /* -c: checksums ignored, no bitmap read */
};

/* command flags */
#define CMD_NEEDS_WRITE 0x1        /* refused unless the image was opened with -w */
#define CMD_LIST_FIELDS 0x2        /* but `CMD -l` (list the fields) is not */
#define CMD_NEEDS_BITMAPS 0x4      /* reads a bitmap: refused in catastrophic mode (-c) */

struct command {
	const char *name;
	const char *aliases[3];    /* other names, NULL-terminated */
	const char *args;          /* usage of the arguments, "" if none */
	const char *help;          /* one line */
	int (*run)(struct session *s, int argc, char **argv);
	unsigned flags;
};

extern const struct command commands[];

/* modify.c: run argv as a line of the operation script language */
int cmd_script(struct session *s, int argc, char **argv);

/* ---- editing commands (edit.c) ---------------------------------------- */

int cmd_set_super_value(struct session *s, int argc, char **argv);
int cmd_set_bg(struct session *s, int argc, char **argv);
int cmd_set_inode_field(struct session *s, int argc, char **argv);
int cmd_clri(struct session *s, int argc, char **argv);
int cmd_set_bmap(struct session *s, int argc, char **argv);
int cmd_clear_bmap(struct session *s, int argc, char **argv);
int cmd_zap_block(struct session *s, int argc, char **argv);
int cmd_set_dirent(struct session *s, int argc, char **argv);

/* The superblock and a group descriptor with the edits made so far, which
 * reach the image only after the close: sufs_get_super() when there are
 * none, else view filled in. */
const struct sufs_super *edit_super_view(struct session *s, struct sufs_super *view);
int edit_group_view(struct session *s, uint32_t group, struct sufs_group *out);
/* After sufs_close() (closed: it succeeded): make those edits on the image.
 * Returns 0, or 1 after a message. */
int edit_finish(struct session *s, int closed);

/* The row whose name or alias is `name`, or NULL. */
const struct command *command_find(const char *name);

/*
 * Split one line into words and run it.  Blank lines and lines whose first
 * word starts with '#' do nothing.  Returns 0 or 1 as the command did.
 */
int command_line(struct session *s, const char *line);

/* Whether a signal asked the command running to stop (main.c): a command
 * that may run long polls it, and stops with fail(..., "interrupted"). */
int debug_interrupted(void);

/* ---- helpers the command files share (commands.c) ---------------------- */

/* "sufs-debug: CMD ARG: message" on stderr; returns 1 for `return fail(...)`.
 * CMD and ARG are printed as print_name() prints names; a user's word in
 * the message itself must be escaped by the caller (escape_name()). */
int fail(const char *cmd, const char *arg, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same for an argument of len bytes (a name from the image, which may
 * hold any byte). */
int fail_name(const char *cmd, const char *name, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * Resolve a path typed by the user, relative to the current directory.  A
 * path of the form <INO> names inode INO directly, and <INO>/rest resolves
 * rest from that directory.  A symbolic link as the last component is
 * followed only when `follow` is set.  Returns 0, or 1 after saying
 * "sufs-debug: CMD PATH: why".
 */
int resolve(struct session *s, const char *cmd, const char *path, int follow, uint32_t *ino);

/* A directory's entries, read whole (callers may then recurse freely). */
struct entry {
	char *name;                /* NUL-terminated copy; len bytes (may hold NULs) */
	size_t len;
	uint32_t ino;
	unsigned ftype;
};
int read_entries(struct session *s, uint32_t dir, struct entry **out, size_t *n);
void free_entries(struct entry *v, size_t n);

/* Nonzero for "." and "..". */
int is_dot_name(const char *name, size_t len);
/* Set bit n of a bitmap; returns whether it was set before. */
int bit_test_and_set(uint8_t *bits, uint32_t n);

/* The name a directory has in its parent (found through ".."): a malloc()ed
 * copy in *name, *len bytes, and the parent in *parent. */
int name_in_parent(struct session *s, uint32_t dir, uint32_t *parent, char **name, size_t *len);

/* Names are printed with print_name() and escape_name() (common/util.h). */

/* The path of a directory, found by climbing "..", malloc()ed; a directory
 * its parent does not list starts the path as <INO>.  NULL: out of memory. */
char *dir_path(struct session *s, uint32_t dir);

/*
 * Open s->image (for writing with s->writable) into s->fs, with write-back
 * left to the user: changes stay in memory until flush, sync or quit
 * (main.c).  Returns 0 or a library error.
 */
int session_open(struct session *s);

/* ---- the dependency engine's views (deps.c) ----------------------------- */
int cmd_deps(struct session *s, int argc, char **argv);
int cmd_why(struct session *s, int argc, char **argv);
int cmd_flush(struct session *s, int argc, char **argv);
int cmd_crash(struct session *s, int argc, char **argv);
int cmd_stats(struct session *s, int argc, char **argv);

/* ---- raw blocks and bitmaps (inspect.c) --------------------------------- */
int cmd_block_dump(struct session *s, int argc, char **argv);
int cmd_imap(struct session *s, int argc, char **argv);
int cmd_testb(struct session *s, int argc, char **argv);
int cmd_testi(struct session *s, int argc, char **argv);
int cmd_ffb(struct session *s, int argc, char **argv);
int cmd_ffi(struct session *s, int argc, char **argv);
int cmd_inode_dump(struct session *s, int argc, char **argv);
int cmd_dirsearch(struct session *s, int argc, char **argv);

/* ---- the blocks of a file (files.c) ------------------------------------ */
int cmd_write(struct session *s, int argc, char **argv);
int cmd_punch(struct session *s, int argc, char **argv);
int cmd_filefrag(struct session *s, int argc, char **argv);

/* ---- extended attributes (xattr.c) --------------------------------------- */
int cmd_ea_list(struct session *s, int argc, char **argv);
int cmd_ea_get(struct session *s, int argc, char **argv);
int cmd_ea_set(struct session *s, int argc, char **argv);
int cmd_ea_rm(struct session *s, int argc, char **argv);
/* A value in quotes with escapes, or (hex) as 0x and hex digits. */
void print_value(FILE *f, const uint8_t *v, size_t len, int hex);
/* "INDENT NAME (LEN) = VALUE" for each attribute of ino: 0, or an error. */
int print_xattrs(struct session *s, uint32_t ino, const char *indent, int hex);
/*
 * Give a host file inode ino's extended attributes: through fd when it is
 * not -1, else as name in the host directory dirfd (a symbolic link's
 * own, never followed).  user. ones must be set (a failure is an error);
 * the others where the host permits (trusted. needs root, an ACL a file
 * system with ACLs): one refused with EPERM, EACCES or EOPNOTSUPP is
 * skipped with a warning.  0, or 1 after a message.
 */
int restore_xattrs(struct session *s, const char *cmd, const char *what, uint32_t ino, int fd,
		   int dirfd, const char *name);

/* ---- file contents (rdump.c) ------------------------------------------- */

/*
 * Copy the contents of inode `ino` (`size` bytes) to the host file open on
 * fd, writing only the blocks the inode maps: holes stay holes.  The file
 * is then truncated to `size`.  A pipe or terminal gets every byte in
 * order instead, holes as zeros.  `what` names the file in messages.
 */
int copy_contents(struct session *s, const char *cmd, const char *what, uint32_t ino,
		  uint64_t size, int fd);

/* Set a host file's owner (when we run as root), mode and times from an
 * inode; fd is open on the file. */
int copy_attributes(const char *cmd, const char *what, const struct sufs_stat *st, int fd);

/* rdump SOURCE... HOSTDIR */
int cmd_rdump(struct session *s, int argc, char **argv);

#endif
