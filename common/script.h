/*
 * script.h - the operation script language (man/sufs-replay.8) and its
 * executor: sufs-replay runs it from files, sufs-debug -w from its prompt.
 *
 * A script is one operation a line: `mkdir /a 0755`, `write /a/f 0 64K 7`,
 * `!ENOENT unlink /nope`.  script_exec_line() parses one line and makes the
 * one library call it names; it knows nothing of files, line numbers or
 * exit statuses, so that any program holding an open file system (replay,
 * the debugger) can run the language.
 *
 * Words are split as sufs-debug splits them: blanks separate; "..." quotes
 * with escapes; '...' quotes literally; \\ \n \t \xHH and \<char> escape
 * outside single quotes.  A '#' that starts a word outside quotes starts a
 * comment.  script_quote() writes a word back in this syntax.
 */
#ifndef SUFS_COMMON_SCRIPT_H
#define SUFS_COMMON_SCRIPT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sufs.h"

/* What script_exec_line() returns. */
enum script_result {
	SCRIPT_OK = 0,        /* the operation gave the result the line asked for,
	                         or the line was blank or a comment */
	SCRIPT_BAD_LINE,      /* the line cannot be parsed: nothing was done */
	SCRIPT_FAILED,        /* the operation failed, or did not fail as expected */
};

/* State that lasts from one line to the next. */
struct script_ctx {
	uint32_t cwd;             /* where relative paths start (the root for replay) */
	int inode_paths;          /* <INO> and <INO>/REST start at inode INO (sufs-debug) */
	struct sufs_cred cred;    /* owner of new inodes */
	/* set by every line that ran an operation: */
	int ran;                  /* 1 if the line ran an operation, 0 if blank */
	int rc;                   /* what the library returned (0 or negative) */
	int expected;             /* the error the line expected (positive), or 0 */
	uint64_t operations;      /* operations run so far */
};

/*
 * Is path <INO> or <INO>/REST (sufs-debug's inode paths)?  1 with *ino
 * (UINT32_MAX for a number past it) and *rest (REST, or "" for <INO>
 * alone), else 0.
 */
int script_inode_path(const char *path, uint32_t *ino, const char **rest);

/* A context for running from the root directory of fs, new inodes owned
 * by uid:gid. */
void script_ctx_init(struct script_ctx *ctx, struct sufs_fs *fs, uint32_t uid, uint32_t gid);

/*
 * Parse and run one line (with or without its newline).  On anything but
 * SCRIPT_OK, err holds the reason, such as "unlink /a: No such file or
 * directory" or "unknown operation 'mkdri'", without the script's name or
 * line number (the caller knows those).
 */
int script_exec_line(struct sufs_fs *fs, const char *line, struct script_ctx *ctx,
		     char *err, size_t errlen);

/*
 * What a line names, without running it, for a caller that follows what
 * the operations change (the crash harness's oracle): the operation (NULL
 * for a blank line or a comment) and the arguments that are paths it acts
 * on (both names of link and rename; fsync's file; not a symlink's
 * target).  Returns 0, or -1 when the line cannot be parsed.  The strings
 * live until script_line_free().
 */
struct script_line {
	const char *op;
	int npaths;
	const char *path[2];
	const char *arg0;         /* the first argument, or NULL */
	char *buf;
};
int script_line_parse(const char *line, struct script_line *out);
void script_line_free(struct script_line *l);

/*
 * The bytes that `write PATH OFFSET LENGTH SEED` writes: byte number o of
 * the file is a function of SEED and o alone (the man page gives the
 * formula), so that overlapping writes agree and any range can be checked
 * later.  Fills buf with the bytes for offsets off .. off + len - 1.
 */
void script_pattern(uint64_t seed, uint64_t off, void *buf, size_t len);

/* The name of an error code for the `!NAME` prefix ("ENOENT"), or NULL;
 * err is positive (an errno value) or a SUFS_E... value. */
const char *script_errno_name(int err);

/*
 * Write one word so that the parser reads it back byte for byte: as it is
 * when it is plain, else in double quotes with escapes.
 */
void script_quote(FILE *f, const char *word, size_t len);

/*
 * Split the len bytes of line into words as the script language does:
 * blanks between words; '...' quotes literally, "..." with escapes; \\,
 * \n, \t and \xHH (not 00) outside single quotes; a word that starts
 * with # ends the line (a comment).  The words go into out (room for len
 * + 1 bytes), pointed to by argv (room for max + 1 pointers, the last
 * NULL).  Returns the number of words, at most max (then there may be
 * more), or -1 with *why saying what is wrong.
 */
int script_split(const char *line, size_t len, char *out, char **argv, int max,
		 const char **why);

#endif
