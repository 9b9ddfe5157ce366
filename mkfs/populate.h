/*
 * populate.h - copy a directory tree into a freshly made file system
 * (mkfs.sufs -d).
 */
#ifndef SUFS_POPULATE_H
#define SUFS_POPULATE_H

#include <stdint.h>
#include <sys/types.h>

struct sufs_fs;

struct populate_opts {
	int progress;           /* draw a progress bar (when stderr is a terminal) */
	int keep_root_owner;    /* leave the root directory's owner alone (-E root_owner) */
	int clamp;              /* clamp atime and mtime to at most clamp_sec */
	int64_t clamp_sec;      /* (SOURCE_DATE_EPOCH) */
	int skip_set;           /* skip_dev/skip_ino name a file not to copy (the image) */
	dev_t skip_dev;
	ino_t skip_ino;
	uint64_t entries;       /* for the progress bar: populate_count()'s */
	uint32_t symlink_max;   /* the longest symlink target the file system holds */
};

/* What a tree will take, counted before anything is written. */
struct populate_need {
	uint64_t entries;       /* names below the top, skipped ones included */
	uint64_t inodes;        /* exact: each file once however many names it has */
	uint64_t min_blocks;    /* at least: a block per directory, per long
				 * symlink and per file whose extended
				 * attributes do not fit in its inode; files'
				 * data is not read, and blocks of zeros would
				 * be holes */
	char *too_long;         /* the first symlink met whose target is longer
				 * than opts->symlink_max (malloc()ed), or NULL */
	uint64_t too_long_size; /* and its target's length */
};

struct populate_stats {
	uint64_t files;         /* regular files, each hard link counted once */
	uint64_t dirs;          /* the root not included */
	uint64_t symlinks;
	uint64_t specials;      /* device nodes and fifos */
	uint64_t hardlinks;     /* extra names of files already copied */
	uint64_t skipped;       /* sockets and the image itself */
	uint64_t bytes;         /* file data copied (holes not included) */
};

/*
 * Copy everything below the directory srcdir into the root directory of fs,
 * and give the root srcdir's permissions, owner and times.  Entries are
 * copied in byte order of their names, so the result does not depend on the
 * order the source file system lists them in, nor on its inode numbers.
 * With opts->clamp, access and modification times later than
 * opts->clamp_sec are recorded as clamp_sec.
 * On failure a message naming the source path has been printed and the
 * library's (or the system's) negative error code is returned; fs is then
 * only fit for sufs_abandon().
 */
int populate(struct sufs_fs *fs, const char *srcdir, const struct populate_opts *opts,
	     struct populate_stats *stats);

/*
 * Count what populate() will make of srcdir, deciding entry by entry as it
 * does (the file opts->skip_* names, sockets and unknown types left out).
 * Without exact, the entries' types only, with no stat of each: the
 * inodes and blocks are then at most what exact would count (each name a
 * file of its own, each entry with extended attributes one that takes a
 * block), and entries the same; symlinks are always looked at, for a
 * target too long to be copied at all (need->too_long, which the caller
 * frees).  An entry that cannot be read only makes the counts short.  0,
 * or -ENOMEM (the counts are then short too).
 */
int populate_count(const char *srcdir, const struct populate_opts *opts, int exact,
		   struct populate_need *need);

#endif
