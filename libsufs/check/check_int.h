/*
 * check_int.h - what the checker's files share; only they include it.
 *
 * One run of the checker is a struct chk: what it was asked, what it has
 * found so far (a bit per block, a file type and a name count per inode,
 * the directories), and where the pass at work is.  The passes fill it in
 * order (run_passes(), check.c), and every problem any of them finds goes
 * through fix_problem().  The files, in the order a run uses them:
 *
 *   check.c    the driver: choosing how to run, the passes in order;
 *   decide.c   fix_problem(), the one place that decides, and the run's
 *              progress;
 *   problems.c the table of problems, and a problem made from its row;
 *   found.c    what passes find for later ones: the directories, the
 *              names counted, the snapshot files;
 *   pass0.c    the superblock and the group descriptors;
 *   pass1.c    inodes and block maps; pointers past a file's end;
 *   xattr.c    pass 1's look at an inode's extended attributes;
 *   pass1b.c   blocks claimed twice;
 *   pass2.c    directory blocks and entries (names.c: a name given twice);
 *   pass3.c    connectivity and /lost+found;
 *   pass4.c    link counts; the snapshot slots and snapshot files;
 *   pass5.c    bitmaps and summaries;
 *   repair.c   what the repairs of several passes share;
 *   bgcheck.c  the background check: the checker on a snapshot's view,
 *              its fixes made on the live file system.
 */
#ifndef SUFS_CHECK_INT_H
#define SUFS_CHECK_INT_H

#include "sufs_int.h"

/*
 * A map of bytes made in chunks of 1 << shift bytes on the first write
 * that needs each (sparse_at(), found.c); an absent chunk reads as zeros.  The
 * checker's bit per block and byte per inode are two: most of a large
 * image's blocks and inode numbers are never used, and their chunks are
 * never made.
 */
struct sparse {
	uint8_t **chunk;
	size_t n;
	unsigned shift;
};
#define FOUND_CHUNK_SHIFT 9     /* 512 bytes: the bits of 4096 blocks */
#define INO_CHUNK_SHIFT 12      /* 4096 inodes */

/* A directory, as passes 2 and 3 know it. */
struct dirinfo {
	uint32_t ino;
	uint32_t dotdot;        /* what its '..' names (0: none) */
	uint32_t parent;        /* the directory whose entry names it (0: none) */
	uint32_t mark;          /* pass 3: 1 reaches the root, else a walk's stamp */
	uint32_t entries;       /* live entries other than '.' and '..' */
	uint64_t name_blk;      /* where the entry naming it is (pass 2) */
	uint32_t name_off;
	uint8_t cleared;
};

/*
 * A pointer past the end of its file, found by pass 1's walk and judged
 * once every inode has claimed its blocks (past_judge()).  Where it lives:
 * the inode's own slot (parent 0), or an indirect block's.
 */
struct past {
	uint32_t ino;
	uint32_t slot;
	uint64_t parent;
	uint64_t ptr;
	uint64_t lblk;
	uint64_t size;
	int level;
};

/* A file with the snapshot flag (pass 1), and where a name of it is
 * (pass 2; dir 0: none met). */
struct flagged {
	uint32_t ino;
	uint32_t dir;
	uint32_t name_off;
	uint64_t name_blk;
	char name[SUFS_NAME_MAX + 1];
};

/* What a problem is about: the placeholders of its message. */
struct pctx {
	uint32_t ino, ino2, dir;
	uint64_t blk, blk2, num, num2;
	const char *str, *str2;
};

/* Pass 2: the names met so far in the directory being checked, to find a
 * name given twice.  An open-addressing table (a name's hash, and where in
 * the arena the name is) over an arena that holds, for each name, the
 * inode its entry names, its length and its bytes. */
struct nameslot {
	uint32_t hash;
	uint32_t off;           /* arena offset + 1; 0 is empty */
};

struct nameset {
	uint8_t *arena;
	size_t used, cap;
	struct nameslot *slots;
	size_t nslots, n;
	size_t suffix;          /* the next ~N to try for a renamed entry */
};

enum stop { GOING, HALTED, CANCELLED };

/* What a leak-only trial run reports is held back: it is told only if the
 * trial is the last run (something worse than a leak was found). */
struct held {
	unsigned pass;          /* a pass began (problem.def NULL) */
	const char *pass_name;
	struct sufs_problem problem;
};

struct chk {
	struct sufs_fs *fs;
	const struct sufs_check_opts *o;
	struct sufs_check_result *r;
	unsigned flags;
	int dry;                /* leak-only trial run: decide nothing, count */
	int writable;
	int touched;            /* the image has been marked unclean for repair */
	enum stop stop;
	uint64_t nblocks;
	uint32_t ninodes;
	struct sparse found;    /* blocks in use: metadata and claimed, a bit each */
	uint8_t *dup;           /* blocks claimed twice (NULL if none) */
	uint8_t *seen;          /* pass 1b: blocks whose first claimant is known */
	int dup_kept;           /* pass 1b: a block is still claimed twice */
	int ino_shares;         /* pass 1b: the current inode keeps a shared block
	                           (1: a copy was refused, 2: no room for one) */
	uint64_t *firsts;       /* pass 1b: blocks cleared inodes, and the current
	                           one, were the first claimants of */
	size_t nfirsts, capfirsts;
	struct sparse ino;      /* per inode: file type and names counted (ino_ftype()) */
	int nomem;              /* a chunk of found or ino could not be made */
	uint8_t sink;           /* where its writes went */
	struct many {           /* the inodes with INO_MANY names or more */
		uint32_t *ino, *names;  /* open addressing; ino 0: an empty slot */
		size_t n, cap;          /* cap: a power of 2, or 0 */
	} many;
	struct dirinfo *dirs;
	size_t ndirs, capdirs;
	uint64_t ndups;
	uint64_t *claimed;      /* pass 1: blocks the current inode claimed first */
	size_t nclaimed, capclaimed;
	uint8_t *scratch;       /* a block */
	uint32_t lost_found;
	int alloc_ready;        /* on-disk bitmaps agree with the found ones */
	int alloc_unsafe;       /* they could not be made to */
	int dotdot_counted;
	uint64_t cur_pblk;      /* pass 2: the directory block being checked */
	uint8_t *cur_blk;
	struct buf *cur_buf;
	struct nameset names;   /* pass 2: the names in the current directory */
	uint32_t snapdir;       /* pass 2: /.snap's inode (0: none met yet) */
	uint32_t snap_named;    /* pass 2: bit i, slot i's file is named in /.snap */
	unsigned polls;
	struct held *held;
	size_t nheld, capheld;
	uint64_t *snapclaims;   /* pass 5: leaked blocks a snapshot needs */
	size_t nsnapclaims, capsnapclaims;
	struct flagged *flagged; /* pass 1: files with the snapshot flag */
	size_t nflagged, capflagged;
	struct past *past;      /* pass 1: pointers past a file's end, judged last */
	size_t npast, cappast;
	uint8_t *pastmap;       /* blocks under them, one bit each (NULL: none) */
	/* the background check (bgcheck.c): each fix decided is handed to
	 * defer, to be made on the live file system after the check */
	void (*defer)(void *arg, const struct sufs_problem *p);
	void *defer_arg;
};

int sparse_init(struct sparse *s, uint64_t bytes, unsigned shift);
void sparse_free(struct sparse *s);

static inline uint8_t sparse_get(const struct sparse *s, uint64_t i)
{
	const uint8_t *p = (i >> s->shift) < s->n ? s->chunk[i >> s->shift] : NULL;

	return p ? p[i & ((1u << s->shift) - 1)] : 0;
}

/* The blocks found in use. */
static inline int found_test(const struct chk *c, uint64_t blk)
{
	return (sparse_get(&c->found, blk >> 3) >> (blk & 7)) & 1;
}
void found_set(struct chk *c, uint64_t blk);
void found_clear(struct chk *c, uint64_t blk);

/* Bitmaps of the checker's own (a bit per block or inode, in memory). */
static inline int bit_test(const uint8_t *m, uint64_t n)
{
	return (m[n >> 3] >> (n & 7)) & 1;
}
static inline void bit_set(uint8_t *m, uint64_t n)
{
	m[n >> 3] |= (uint8_t)(1u << (n & 7));
}
static inline void bit_clear(uint8_t *m, uint64_t n)
{
	m[n >> 3] &= (uint8_t)~(1u << (n & 7));
}

/* decide.c: what every pass uses: the one place that decides
 * (fix_problem()), a pass beginning, the run's progress; and what a trial
 * run held back, told when it turns out to be the last. */
int fix_problem(struct chk *c, unsigned code, const struct pctx *x);
int fixes_leaks_only(const struct chk *c);
void fix_failed(struct chk *c);
int poll_stop(struct chk *c);
void pass_progress(struct chk *c, unsigned pass, uint64_t done, uint64_t total);
void begin_pass(struct chk *c, unsigned pass, const char *name);
void tell_held(struct chk *c);

/* found.c: the directories found, the names counted, and the snapshot
 * files and where each is named (passes 1 and 2 note them for pass 4). */
struct dirinfo *dir_find_info(struct chk *c, uint32_t ino);
int dir_add_info(struct chk *c, uint32_t ino);
void count_link(struct chk *c, uint32_t ino);
void uncount_link(struct chk *c, uint32_t ino);
/* The names counted for ino (saturated at UINT16_MAX). */
uint32_t ino_names(const struct chk *c, uint32_t ino);
/* ino is free again: no type, no names. */
void ino_forget(struct chk *c, uint32_t ino);

/*
 * What the checker keeps of each inode is one byte: its file type
 * (SUFS_FT_*, 0 when free) in the low 3 bits; INO_SINGLE, set when pass 1
 * read a file (not a directory) with one link; and the names counted in
 * the high 4 bits, up to INO_MANY - 1.  An inode with INO_MANY names or
 * more has its count in c->many (found.c).  So 10^6 inodes cost 1 MB,
 * and pass 4 reads again only the inodes whose link count it cannot
 * tell from that byte (a single file with one name is right).
 */
#define INO_FT_MASK 0x07u
#define INO_SINGLE 0x08u
#define INO_NAMES_SHIFT 4
#define INO_MANY 15u

static inline unsigned ino_ftype(const struct chk *c, uint32_t ino)
{
	return sparse_get(&c->ino, ino) & INO_FT_MASK;
}

/* Did pass 1 find ino a file (not a directory) with one link? */
static inline int ino_single(const struct chk *c, uint32_t ino)
{
	return (sparse_get(&c->ino, ino) & INO_SINGLE) != 0;
}

void ino_set_ftype(struct chk *c, uint32_t ino, unsigned ftype, int single);
int flagged_note(struct chk *c, uint32_t ino);
void flagged_name(struct chk *c, uint32_t dir, uint32_t ino, const uint8_t *de);
void note_snap_name(struct chk *c, const struct dirinfo *d, uint32_t ino,
		    const char *name);
/* The inode pass 1 is at claims block b: found, or found twice (c->dup). */
int claim_block(struct chk *c, uint64_t b);

/* check.c: what the background check (bgcheck.c) runs the checker with: a run's
 * state made ready (chk_init(), then its own c->defer), and the check of
 * a device with it. */
void chk_init(struct chk *c, const struct sufs_check_opts *o, struct sufs_check_result *r);
/* The caller's options (NULL: none) as this release knows them (sufs.h);
 * CHECK_OPTS_FIRST: the members of release 0.1, which a size of 0 means. */
#define CHECK_OPTS_FIRST (offsetof(struct sufs_check_opts, throttle_kib) + sizeof(uint32_t))
int check_opts(const struct sufs_check_opts *given, struct sufs_check_opts *o);
int check_dev(struct chk *c, struct sufs_dev *dev);

/* problems.c: a problem found, as reported, from its row of the table. */
void problem_make(struct sufs_problem *p, const struct sufs_problem_def *d, const struct pctx *x);

/* repair.c: what repairs of several passes share. */
int claim_inode(struct chk *c, uint32_t ino);
int chk_alloc_block(struct chk *c, uint64_t goal, uint64_t *out);
int clear_inode(struct chk *c, uint32_t ino, const struct sufs_inode *in);
int prepare_alloc(struct chk *c);

/* pass0.c: the superblock, chosen before the file system is opened
 * (choose_super()), then its fields and the group descriptors. */
int choose_super(struct chk *c, struct sufs_dev *dev, uint64_t *off,
		 struct sufs_super *sb, const char **why);
void check_super_fields(struct chk *c, int backup);
void check_groups(struct chk *c);

/* pass1.c: inodes and block maps; then the pointers past a file's end. */
uint64_t span_of(struct chk *c, int level);
int past_judge(struct chk *c);
int pass1(struct chk *c);

/* xattr.c: pass 1's look at an inode's extended attributes, its block
 * claimed (claim_block(), found.c: found, or found twice). */
int check_xattrs(struct chk *c, uint32_t ino, struct sufs_inode *in, int *changed);

/* pass1b.c: blocks claimed twice. */
int pass1b(struct chk *c);

/* pass2.c: directories; dir_fresh() makes an empty directory block
 * (block 0 with '.' and '..'). */
void dir_fresh(uint8_t *blk, uint32_t bsize, uint32_t self, uint32_t parent, int first);
int is_name(const uint8_t *de, const char *name);
int pass2(struct chk *c);

/* names.c: the names of the directory pass 2 is checking. */
void names_reset(struct nameset *ns);
void names_free(struct nameset *ns);
int names_has(const struct nameset *ns, const uint8_t *name, uint32_t len);
int names_lookup(struct nameset *ns, const uint8_t *name, uint32_t len,
		 struct nameslot **slot);
uint32_t names_ino(const struct nameset *ns, const struct nameslot *slot);
void names_put(struct nameset *ns, struct nameslot *slot, const uint8_t *name,
	       uint32_t len, uint32_t ino);

/* pass3.c: connectivity; reconnect() gives an inode a name in
 * /lost+found. */
int reconnect(struct chk *c, uint32_t ino);
int pass3(struct chk *c);

/* pass4.c: reference counts; the snapshot slots and files, from what
 * passes 1 and 2 note for them (found.c). */
int pass4(struct chk *c);
int check_snap_slots(struct chk *c);
int snap_orphans(struct chk *c);

/* pass5.c: bitmaps and summaries (run early by prepare_alloc()). */
int pass5(struct chk *c);

#endif /* SUFS_CHECK_INT_H */
