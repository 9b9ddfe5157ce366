/*
 * sufs_int.h - what the layers of libsufs share and the programs do not see.
 *
 * The layers, bottom to top, a folder each (each calls only into its own
 * layer and those below it; the hooks that reach upward are fields of
 * struct cache and struct sufs_fs, named in doc/ARCHITECTURE.md):
 *   base/     byte order, the on-disk format (format.h: the offsets),
 *             errors, pools of records of one size, the clock
 *   dev/      the device: whole-block I/O, barrier, the write lock
 *   cache/    the buffer cache: one buffer per block
 *   engine/   the dependency engine (engine.h): updates, write images,
 *             epochs, deferred work, the write-back policy
 *   meta/     the superblock and group descriptors, bitmaps, inodes and
 *             block maps, directories and their in-memory index
 *   ops/      the file-system operations
 *   snap/     snapshots: copy on write, claims, the view
 *   fs/       opening and closing; formatting
 *   check/    the checker (check_int.h), and its background run
 * Layers above the cache never write a block: they change a buffer's bytes
 * after announcing the change with buf_update(), and the engine decides
 * when and how the block goes out.  tests/layers/run checks all of this.
 */
#ifndef SUFS_INT_H
#define SUFS_INT_H

#include "sufs.h"
#include "sufs_test.h"

#include <pthread.h>
#include <string.h>

/* ---- little-endian access ---------------------------------------------- */

static inline uint16_t get16(const void *p)
{
	const uint8_t *b = p;
	return (uint16_t)(b[0] | b[1] << 8);
}
static inline uint32_t get32(const void *p)
{
	const uint8_t *b = p;
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}
static inline uint64_t get64(const void *p)
{
	const uint8_t *b = p;
	return (uint64_t)get32(b) | (uint64_t)get32(b + 4) << 32;
}
static inline void put16(void *p, uint16_t v)
{
	uint8_t *b = p;
	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
}
static inline void put32(void *p, uint32_t v)
{
	uint8_t *b = p;
	b[0] = (uint8_t)v;
	b[1] = (uint8_t)(v >> 8);
	b[2] = (uint8_t)(v >> 16);
	b[3] = (uint8_t)(v >> 24);
}
static inline void put64(void *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32((uint8_t *)p + 4, (uint32_t)(v >> 32));
}

/* Are the len bytes at p all zero?  (Each equals the next and the first
 * is zero: memcmp's speed, not a branch per byte.) */
static inline int mem_is_zero(const void *p, size_t len)
{
	const uint8_t *b = p;
	return len == 0 || (b[0] == 0 && memcmp(b, b + 1, len - 1) == 0);
}

#include "base/format.h"

/* A name's hash (FNV-1a): dirhash's index, and fsck's search for a name
 * given twice in a directory. */
static inline uint32_t name_hash(const void *name, size_t len)
{
	const uint8_t *p = name;
	uint32_t h = 2166136261u;

	while (len--)
		h = (h ^ *p++) * 16777619u;
	return h;
}

static inline uint32_t dirent_size(uint32_t namelen)
{
	return (SUFS_DIRENT_HDR + namelen + 7u) & ~7u;
}

/* ---- the buffer cache ---------------------------------------------------- */

struct sufs_fs;
struct buf;

/* What a block holds decides how its write image is sealed (checksums) and
 * how it is verified when read. */
enum buf_type {
	BUF_RAW,     /* unknown (tools' raw reads) */
	BUF_DATA,
	BUF_BITMAP,
	BUF_ITABLE,  /* inode table: inode checksums */
	BUF_DIR,     /* directory block: tail checksum */
	BUF_IND,     /* indirect block */
	BUF_XATTR,   /* attribute block: its checksum */
};

/* Objects of one size, cut from chunks and kept for reuse (pool.c): the
 * engine's records and edges, the cache's buffers.  All zero: empty (and
 * pool_drain() leaves it so, no_huge aside). */
struct pool {
	void *head;                     /* free ones */
	struct chunk *chunks;
	char *next, *end;               /* not yet handed out, in the newest chunk */
	size_t bytes;                   /* in its chunks */
	int no_huge;                    /* never grow by 2 MiB chunks */
};
/* Pools that may hold less than this are better kept from huge chunks. */
#define POOL_HUGE_MIN_USE ((size_t)4 << 20)
void *pool_get(struct pool *p, size_t size);
void pool_put(struct pool *p, void *x);
void pool_drain(struct pool *p);

/* What is known of the checksums of an inode-table block's inodes: a
 * change of its bytes (mark_dirty()) makes it unknown again, except the
 * store of a whole inode, which brings its checksum (inode_store()). */
enum inodes_ok {
	INODES_UNKNOWN,
	INODES_GOOD,                    /* each is all zero or has its checksum */
	INODES_SOME_BAD,
};

struct buf {
	uint64_t blk;
	uint8_t *data;
	struct buf *hnext;              /* hash chain */
	struct buf *prev, *next;        /* LRU list, oldest first */
	struct buf *dnext, **dprev;     /* the dirty list, while dirty */
	uint32_t refs;
	uint8_t type;
	uint8_t dirty;
	uint8_t csum_bad;               /* BUF_DIR, BUF_XATTR: its checksum (and for an
	                                   attribute block its magic) failed when read */
	uint8_t dir_bad;                /* BUF_DIR, BUF_XATTR: its entries are malformed
	                                   (dir_block_check, sufs_xattr_check) */
	uint8_t csum_known;             /* csum_bad is of the bytes it holds now */
	uint8_t recheck;                /* used in another role since checked (get()) */
	uint8_t plain;                  /* changed outside any update (summaries, times) */
	uint8_t inodes_ok;              /* BUF_ITABLE: enum inodes_ok (inode.c) */
	uint32_t owner;                 /* BUF_DIR: the directory's inode, for fsync */
	/* then cache->extra bytes: the engine's (buf_extra()) */
};

/* The bytes the cache keeps after a buffer for the layer above it. */
static inline void *buf_extra(const struct buf *b)
{
	return (void *)(b + 1);
}

struct cache {
	struct buf **hash;
	size_t nhash;
	size_t count, dirty;
	struct buf *dirtylist;          /* the dirty buffers, in no order */
	size_t limit;                   /* buffers kept at most (soft) */
	size_t dirty_limit;             /* write back when more are dirty */
	struct buf lru;                 /* sentinel */
	struct pool bufs, blocks;       /* struct buf (and its extra), and the blocks' bytes */
	size_t extra;                   /* bytes kept after each struct buf */
	uint64_t retypes;               /* directory blocks taken in another role
					 * (dirhash.c: its indexes are stale then) */
	/* hooks the layers above set (doc/ARCHITECTURE.md): */
	int (*write_back)(struct sufs_fs *fs);       /* too much is dirty (the engine) */
	void (*before_change)(struct sufs_fs *fs, struct buf *b); /* snapshots: copy */
	int (*wants_old)(const struct sufs_fs *fs, uint64_t blk); /* snapshots */
};

#include "engine/engine.h"

/* ---- the file system in memory -------------------------------------------- */

struct sufs_fs {
	struct sufs_dev *dev;
	struct sufs_super sb;
	uint64_t sb_offset;             /* where our superblock copy came from */
	struct sufs_group *groups;      /* decoded group descriptors */
	uint8_t *group_bad;             /* per group, the descriptor was bad at open:
	                                   GROUP_BAD_CSUM or GROUP_BAD_FIELD */
	uint8_t *gdt_dirty;             /* one flag per GDT block */
	int sb_dirty;
	unsigned flags;                 /* SUFS_OPEN_* */
	int was_clean;                  /* the image was clean when opened */
	int mkfs;                       /* formatted by sufs_mkfs, not yet committed */
	uint32_t bsize;
	uint32_t bshift;
	uint32_t ptrs;                  /* block pointers per indirect block */
	uint32_t inodes_per_block;
	struct cache cache;
	int fixed_clock;
	int64_t clock_sec;
	uint32_t clock_nsec;
	uint32_t next_generation;
	uint32_t last_dir_group;        /* spreads new directories */
	struct sufs_stats stats;
	uint8_t *zero;                  /* a block of zeros */
	unsigned mode;                  /* enum sufs_mode */
	struct deps *deps;              /* the engine's, private (engine/deps_priv.h) */
	unsigned dirty_percent;
	unsigned max_age_ms;
	double last_epoch;              /* monotonic seconds */
	unsigned broken_rule;           /* sufs_test_break_rule(): 0, or the rule broken */
	int order_lost_noted;           /* fs_lost_order() wrote the flag */
	/* the directory each inode was last given a name in while open (dir.c,
	 * parent_note()): where fsync walks up from once that name is on disk */
	struct parent_hint { uint32_t ino, dir; } *parents;
	size_t nparents, capparents;    /* open addressing; capparents a power of 2 */
	struct hold { uint32_t ino, count; } *holds; /* ops.c: files held open, sorted */
	size_t nholds, capholds;
	struct dirhash *dirhash[32];    /* indexes of large directories (dirhash.c) */
	uint64_t dirhash_clock;
	uint64_t dirhash_retypes;       /* cache.retypes when the indexes were built */
	struct snap *snaps[SUFS_SNAP_SLOTS]; /* snap.c: the snapshots kept, oldest first */
	/* the allocator's hooks (snap.c sets them while a snapshot is kept):
	 * a freed block a snapshot needs is claimed by it (1); a block one
	 * needs is never handed out, even where its bit looks clear */
	int (*claim_freed)(struct sufs_fs *fs, uint64_t blk);
	int (*block_held)(const struct sufs_fs *fs, uint64_t blk);
	unsigned nsnaps;
	unsigned snap_busy;             /* snap.c: copies or claims in progress (nested) */
	pthread_mutex_t lock;           /* sufs_lock(): a second thread reads views */
	/* called for each block allocated (fsck: blocks a snapshot's copies
	 * take while it repairs are in use) */
	void (*alloc_note)(struct sufs_fs *fs, uint64_t blk, void *arg);
	void *alloc_note_arg;
	/* called for each block written (the debugger's flush view) */
	void (*trace)(struct sufs_fs *fs, struct buf *b, void *arg);
	void *trace_arg;
};

/* ---- base/clock.c ---- */
double now_seconds_mono(void);

/* ---- base/opts.c ---- */
/* An option structure as the caller gave it (its first member its size, 0
 * for the first release's first_size bytes) into this library's full one,
 * the members it lacks zero (their defaults).  -EINVAL for a size below
 * the first release's, or a member unknown here that is not zero. */
int opts_take(void *full, size_t full_size, const void *given, size_t first_size);

/* ---- cache/cache.c ---- */
int cache_init(struct sufs_fs *fs, size_t limit_bytes, size_t extra);
void cache_destroy(struct sufs_fs *fs);
int buf_get(struct sufs_fs *fs, uint64_t blk, enum buf_type type, struct buf **out);
int buf_get_new(struct sufs_fs *fs, uint64_t blk, enum buf_type type, struct buf **out);
void buf_put(struct sufs_fs *fs, struct buf *b);
void buf_touch(struct sufs_fs *fs, struct buf *b);
void cache_before_change(struct sufs_fs *fs, struct buf *b);
void cache_mark_dirty(struct sufs_fs *fs, struct buf *b);
void cache_seal(struct sufs_fs *fs, struct buf *b, uint8_t *image);
const char *buf_type_name(unsigned type);   /* "inode table", ... (enum buf_type) */
struct buf *cache_lookup(struct sufs_fs *fs, uint64_t blk);
void cache_drop(struct sufs_fs *fs, uint64_t blk);
/* b is dirty no more (written, its block freed, or dropped): off the
 * dirty list */
void cache_set_clean(struct sufs_fs *fs, struct buf *b);

/* ---- engine/writeback.c: the write-back policy (the rest of the
 * engine's API is engine.h) ---- */
int fs_op_end(struct sufs_fs *fs, int err);
int cache_writeback(struct sufs_fs *fs);

/* ---- meta/super.c: the superblock and group descriptors in memory ---- */
int fs_lost_order(struct sufs_fs *fs);
int fs_read_gdt(struct sufs_fs *fs);
int fs_write_all(struct sufs_fs *fs);
void fs_free_base(struct sufs_fs *fs);
/* The snapshot slots: the slot naming inode ino (-1: none); whether ino is
 * a snapshot file; whether (dir, name) is /.snap while it holds a snapshot
 * (snapshots are found by name there: it keeps its name while it holds
 * any). */
extern const char snapdir_name[6];
int sb_snap_slot(const struct sufs_fs *fs, uint32_t ino);
int snap_is_file(const struct sufs_fs *fs, uint32_t ino);
int snap_dir_pinned(const struct sufs_fs *fs, uint32_t dir, const char *name, size_t len);
int fs_write_super(struct sufs_fs *fs, int all_copies);
int fs_write_gdt(struct sufs_fs *fs);
/* Read and check every group descriptor (sufs_group_check()) into groups
 * (if not NULL), marking bad ones in bad (if not NULL) with one of: */
#define GROUP_BAD_CSUM  1
#define GROUP_BAD_FIELD 2
/* Returns how many are bad, or an error. */
int fs_scan_gdt(struct sufs_dev *dev, const struct sufs_super *sb, struct sufs_group *groups,
		uint8_t *bad);
void fs_now(struct sufs_fs *fs, int64_t *sec, uint32_t *nsec);
int fs_alloc_struct(struct sufs_dev *dev, const struct sufs_super *sb, unsigned flags,
		    struct sufs_fs **out);

/* ---- meta/alloc.c ---- */
/* A free block near goal (meta: in the metadata area of goal's group first,
 * meta_goal()), its bit set. */
int alloc_block(struct sufs_fs *fs, uint64_t goal, int meta, uint64_t *blk, upd_id *id);
uint64_t meta_goal(const struct sufs_fs *fs, uint64_t goal);
int alloc_inode(struct sufs_fs *fs, uint32_t parent, int is_dir, uint32_t *ino, upd_id *id);
int alloc_room(struct sufs_fs *fs, uint64_t need);
int free_block(struct sufs_fs *fs, uint64_t blk);
int free_inode(struct sufs_fs *fs, uint32_t ino, int was_dir);
int bitmap_test(struct sufs_fs *fs, enum sufs_bitmap which, uint64_t n, int *set);
int bitmap_set(struct sufs_fs *fs, enum sufs_bitmap which, uint64_t n, int set, upd_id *id);
int block_in_range(struct sufs_fs *fs, uint64_t blk);

/* ---- meta/inode.c ---- */
int inode_load(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in);
int inode_forget_new(struct sufs_fs *fs, uint32_t ino);
int inode_forget_blocks(struct sufs_fs *fs, uint32_t ino, const struct sufs_inode *in,
			unsigned *fresh);
int inode_store(struct sufs_fs *fs, uint32_t ino, const struct sufs_inode *in,
		enum upd_kind kind, const struct waits *w, upd_id *id);
int inode_walk(struct sufs_fs *fs, uint32_t ino, const struct sufs_inode *in, sufs_block_fn fn,
	       void *arg);
int block_new(struct sufs_fs *fs, uint64_t goal, enum buf_type type, enum upd_kind kind,
	      uint64_t *blk, struct buf **out, struct waits *w);
int bmap_set(struct sufs_fs *fs, struct sufs_inode *in, uint64_t lblk, uint64_t pblk,
	     uint64_t goal, const struct waits *pw, struct waits *iw, struct waits *path);
int bmap_path_waits(struct sufs_fs *fs, uint32_t ino, const struct sufs_inode *in,
		    uint64_t lblk, struct waits *w);
int inode_valid_ino(struct sufs_fs *fs, uint32_t ino);
uint64_t inode_max_blocks(struct sufs_fs *fs);
int bmap_get(struct sufs_fs *fs, const struct sufs_inode *in, uint64_t lblk, uint64_t *pblk);
int bmap_room(struct sufs_fs *fs, const struct sufs_inode *in, uint64_t lblk, unsigned more);
uint64_t inode_goal(struct sufs_fs *fs, uint32_t ino);
int inode_has_blocks(const struct sufs_inode *in);

/* ---- meta/xattr.c: an inode's attributes as one sorted area of entries,
 * xattr_area_max() bytes (a block's worth), zeros after them ---- */
size_t xattr_area_max(const struct sufs_fs *fs);
size_t xattr_area_used(const uint8_t *area, size_t max);
int xattr_load(struct sufs_fs *fs, const struct sufs_inode *in, uint8_t *area);
int xattr_find(const uint8_t *area, size_t max, unsigned ns, const char *name, size_t len,
	       size_t *off);
void xattr_remove_at(uint8_t *area, size_t max, size_t off);
int xattr_put(uint8_t *area, size_t max, unsigned ns, const char *name, size_t len,
	      const void *value, size_t vlen);
int xattr_block_write(struct sufs_fs *fs, uint64_t blk, const uint8_t *area, upd_id *id);
int xattr_block_new(struct sufs_fs *fs, uint64_t goal, const uint8_t *area, uint64_t *blk,
		    struct waits *w);

/* ---- meta/dir.c ---- */
int dir_lookup(struct sufs_fs *fs, uint32_t dir, const struct sufs_inode *din,
	       const char *name, size_t len, uint32_t *ino);
int dir_add(struct sufs_fs *fs, uint32_t dir, struct sufs_inode *din, const char *name,
	    size_t len, uint32_t ino, unsigned ftype, const struct waits *w, struct waits *iw,
	    upd_id *id);
int dir_set(struct sufs_fs *fs, uint32_t dir, const struct sufs_inode *din, const char *name,
	    size_t len, uint32_t ino, unsigned ftype, enum upd_kind kind,
	    const struct waits *w, uint32_t *old, upd_id *id);
int dir_entry_pending(struct sufs_fs *fs, uint32_t dir, const struct sufs_inode *din,
		      const char *name, size_t len, upd_id *id, uint32_t *lblk);
int dir_is_empty(struct sufs_fs *fs, uint32_t dir, const struct sufs_inode *din);
uint32_t parent_hint(const struct sufs_fs *fs, uint32_t ino);
int dir_init(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in, uint32_t parent,
	     struct waits *iw);
int dir_iterate(struct sufs_fs *fs, uint32_t dir, const struct sufs_inode *din,
		sufs_dirent_fn fn, void *arg);

/* ---- meta/dirhash.c ---- */
struct dirhash;
struct dirhash *dirhash_get(struct sufs_fs *fs, uint32_t ino, const struct sufs_inode *din);
int dirhash_lookup(struct dirhash *h, const char *name, size_t len,
		   int (*fn)(void *arg, uint32_t lblk, uint32_t off), void *arg);
int dirhash_add(struct sufs_fs *fs, struct dirhash *h, const char *name, size_t len,
		uint32_t lblk, uint32_t off, const uint8_t *blk);
void dirhash_remove(struct sufs_fs *fs, struct dirhash *h, const char *name, size_t len,
		    uint32_t lblk, uint32_t off, const uint8_t *blk);
uint32_t dirhash_find_room(struct dirhash *h, uint32_t need);
uint32_t dirhash_room_after(const struct dirhash *h, uint32_t need, uint32_t after);
void dirhash_drop(struct sufs_fs *fs, uint32_t ino);

/* ---- ops/: what the background check calls ---- */
int ops_release_inode(struct sufs_fs *fs, uint32_t ino);
int ops_release_all(struct sufs_fs *fs);
int ops_trim_inode(struct sufs_fs *fs, uint32_t ino);

/* ---- snap/snap.c, snap/view.c ---- */
struct snap;
int snap_load(struct sufs_fs *fs);
void snap_unload(struct sufs_fs *fs);

int snap_remove_orphan(struct sufs_fs *fs, uint32_t ino, uint32_t dir, const char *name);
/* The snapshot of a slot just cleared is no longer kept: nothing more is
 * copied into it (-ENOENT: none was). */
int snap_remove_active(struct sufs_fs *fs, unsigned slot);
/* Why inode in, named by a slot, is not a snapshot file (a regular file
 * with the snapshot flag, as large as the file system); NULL when it is. */
const char *snap_file_problem(const struct sufs_fs *fs, const struct sufs_inode *in);
/* The view of the snapshot in slot as a read-only device (name: for
 * messages).  fsck.sufs checks that it reads as this file system was. */
int snap_view_open(struct sufs_fs *fs, unsigned slot, const char *name, struct sufs_dev **out);
int snap_needs(const struct sufs_fs *fs, uint64_t blk);
void snap_cow(struct sufs_fs *fs, struct buf *b);
int snap_claim(struct sufs_fs *fs, uint64_t blk);
int snap_claimed(struct sufs_fs *fs, uint64_t blk);
void snap_view_throttle(struct sufs_dev *view, uint32_t kib, int (*cancelled)(void *arg),
			void *arg);

/* ---- fs/mount.c ---- */
/* Free everything the layers hold, snapshots first. */
void fs_free_struct(struct sufs_fs *fs);

/* check/: the checker's buffer cache, 64 blocks of 4 KiB (never fewer
 * than 64 blocks, the library's minimum).  What the passes read again (a
 * directory's inode in pass 2, its first block in pass 3) comes from the
 * system's page cache; a repair's dirty blocks are written back (async) as
 * the cache fills. */
#define CHECK_CACHE_BYTES (256u << 10)

#endif /* SUFS_INT_H */
