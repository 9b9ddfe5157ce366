/*
 * util.h - small helpers every sufs program shares: messages prefixed with
 * the program's name, number parsing, JSON strings, a progress bar.
 */
#ifndef SUFS_UTIL_H
#define SUFS_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

extern const char *prog;

/*
 * Exit statuses: one scheme for every program but fsck.sufs, which keeps
 * fsck(8)'s.  Each code means the same in every program, and the EXIT
 * STATUS of each man page says so in the same words; a program uses the
 * codes that can happen to it.  tests/bats/exit.bats holds them to it.
 */
enum {
	EXIT_OK = 0,
	EXIT_USAGE = 1,     /* the command line is wrong: nothing was done */
	EXIT_IMAGE = 2,     /* the image cannot be used: it cannot be opened (or made),
			       is not sufs, its superblock is bad, or another program
			       has it open for writing */
	EXIT_NOTFOUND = 3,  /* what the command line names in the image is not there
			       (or, to be made, is there already) */
	EXIT_FAILED = 4,    /* the work failed or found damage (the message says
			       what: a command, a checksum, a layout, ...) */
	EXIT_FILE = 8,      /* a file other than the image cannot be used (a source
			       tree, a script, an output file) */
	EXIT_IO = 16,       /* reading or writing the image failed on the way:
			       changes may be lost */
	EXIT_CRASHED = 32,  /* sufs-replay: stopped at the crash point asked for */
	EXIT_VIOLATION = 64, /* sufs-replay --crash-check: a crash state broke the
			        promise */
};

/* Remember the program's name for messages, and put it in argv[0] for
 * getopt's (not the path it was run by, a libtool wrapper's in a build);
 * ignore SIGXFSZ, so that a file size limit is an error (EFBIG). */
void prog_init(const char *name, char **argv);
/* "prog: message" on stderr. */
void errmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "prog: warning: message" on stderr. */
void warnmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "prog (sufs) VERSION" on stdout, for --version. */
void print_version(void);

/* The value of a hex digit, either case; -1 for any other character. */
int hex_digit(int c);
/* Whole numbers in decimal (or 0x hex); 0 or -1 when malformed or too big. */
int parse_u64(const char *s, uint64_t *out);
int parse_u32(const char *s, uint32_t *out);
int parse_i64(const char *s, int64_t *out);

/* The name every program gives an inode's type in text: "regular file",
 * "directory", "symlink", "character device", "block device", "fifo",
 * "socket"; "free" for a mode of 0, "bad type" for any other. */
const char *type_name(uint32_t mode);

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if none. */
size_t utf8_len(const void *s, size_t n);
/* The same for a printable character outside ASCII (not a C1 control);
 * 0 for ASCII bytes and anything else. */
size_t utf8_printable(const void *s, size_t n);

/* A JSON string literal, quotes included, bytes >= 0x80 passed through
 * when they are valid UTF-8 and escaped as \u00XX otherwise. */
void json_str(FILE *f, const char *s, size_t len);

/*
 * A progress bar on stderr, drawn only when stderr is a terminal and only
 * once the job has run for a second (SUFS_PROGRESS_DELAY=SECONDS in the
 * environment says otherwise: the tests draw at once).  A total of 0 is
 * unknown: a count is drawn, with no bar.  progress_update() is cheap
 * enough to call for every item.  progress_end() draws the bar full, for
 * a job that is done; progress_stop() ends the line where the bar stands,
 * for one that stopped.  A message (errmsg(), warnmsg(), or a program's
 * own through progress_break()) starts on a line of its own: the bar's
 * line is ended where it stands, and the bar, if the job goes on, is
 * drawn again below.
 */
struct progress {
	const char *label;
	uint64_t total;
	uint64_t done;
	uint64_t checked;          /* done when the clock was last read */
	double start;
	double delay;
	double last_draw;
	int active;
	int drawn;
};
void progress_start(struct progress *p, const char *label, uint64_t total);
void progress_update(struct progress *p, uint64_t done);
void progress_end(struct progress *p);
void progress_stop(struct progress *p);
void progress_break(void);

double now_seconds(void);

/*
 * SOURCE_DATE_EPOCH: decimal seconds since 1970, as `date +%s` prints them
 * (reproducible-builds.org).  0 when it is not set, 1 with *sec, or -1
 * after a message when it is anything else: an error, not ignored, since a
 * build that asked for reproducible output must not silently get another.
 */
int source_date_epoch(int64_t *sec);

/* A time as a decimal number of seconds, "-0.500000000" for sec -1 and
 * nsec 500000000 (nsec counts up from sec, as in a struct timespec);
 * into buf (32 bytes hold any), which it returns. */
char *seconds_str(int64_t sec, uint32_t nsec, char *buf, size_t size);

/*
 * Names as they are printed: bytes that would not show (control bytes,
 * DEL, bytes that are not UTF-8) as \xHH, and \n, \t and \\ (so that
 * sufs-debug's command line can take a printed name back).
 */
void print_name(FILE *f, const char *name, size_t len);
/* The same into a malloc()ed string; NULL when out of memory. */
char *escape_name(const char *name, size_t len);
/* The same into out, room for 4 * len + 1 bytes; returns the length. */
size_t escape_name_into(const char *name, size_t len, char *out);
/* The same for a message's argument (an image's path, a typed word): one of
 * four buffers reused in turn, so at most four in one message; a string
 * longer than 1,024 bytes is cut, with "..." after it; an empty one is ''. */
const char *shown(const char *s);

/*
 * -s BLOCK, a backup superblock (sbopt.c): BLOCK alone, the block size
 * found from the copy there, or BLOCK:BLOCKSIZE.  sb_option() sets *off
 * to its byte offset and returns EXIT_OK, or says why not and returns
 * EXIT_USAGE (malformed) or EXIT_IMAGE (no copy there, or no image).
 * sb_find(): the copy at block blk, for whichever block size has it
 * there: 0, -ENOENT, or the error opening the image.
 */
int sb_option(const char *image, const char *arg, uint64_t *off);
int sb_find(const char *image, uint64_t blk, uint64_t *off, uint32_t *block_size);
/* sufs_open(), or from the superblock at byte sb_offset when it is not 0. */
struct sufs_fs;
int open_image(const char *image, unsigned flags, uint64_t sb_offset, struct sufs_fs **fs);

/*
 * UUIDs (uuid.c).  uuid_parse(): 8-4-4-4-12 hex digits; 0 or -1.
 * uuid_random(), uuid_time(): versions 4 and 1; 0 or a negative errno.
 * uuid_arg(): what a user may give: the digits, "random", "time", or
 * "clear" (or "null": all zeros); 0, or -1 with *why.  uuid_format():
 * the digits, lowercase.
 */
int uuid_parse(const char *s, uint8_t uuid[16]);
int uuid_random(uint8_t uuid[16]);
int uuid_time(uint8_t uuid[16]);
int uuid_arg(const char *s, uint8_t uuid[16], const char **why);
void uuid_format(const uint8_t uuid[16], char out[37]);

/* The message for sufs_open(image) failing with rc: sufs_strerror(rc), and
 * for a checksum or a field that fails, where: "checksum does not match
 * (superblock)", "corrupt metadata (superblock field inode_size)", as
 * fsck.sufs says it, or "corrupt metadata (group 0 descriptor field
 * free_blocks)".  A static buffer, overwritten by the next call. */
const char *open_error(const char *image, int rc);

/*
 * An output file that appears whole or not at all (outfile.c): written as
 * a temporary file beside PATH, then renamed into place.
 *
 * outfile_check(): may PATH be written?  0, or a negative errno with *why
 * saying what is wrong: PATH is INPUT itself (when INPUT is given), is
 * there but not a regular file (a symlink included), or is there and
 * FORCE was not given (-EEXIST).
 * outfile_open(): lock the file under PATH, if any, as a writer of an image
 * does (-EBUSY when another program holds it open for writing: its work
 * would be lost), and make the temporary file, with MODE's read and write
 * bits less the umask (the input's: a copy is not readable by more users
 * than what it copies).
 * outfile_commit(): fsync it, put it in place (replacing a file under the
 * name only when REPLACE), fsync the directory.  On failure *where says
 * which step failed and nothing is left; 0 or a negative errno.
 * outfile_abort(): remove the temporary file, if any.
 */
struct stat;
struct outfile {
	const char *path;
	char *tmp;
	int fd;
	int lockfd;    /* the file under the name, locked until committed */
};
int outfile_check(const char *path, const struct stat *input, int force, const char **why);
int outfile_open(struct outfile *o, const char *path, mode_t mode);
int outfile_commit(struct outfile *o, int replace, const char **where);
void outfile_abort(struct outfile *o);

#endif
