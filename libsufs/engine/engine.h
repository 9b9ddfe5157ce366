/*
 * engine.h - the dependency engine as the layers above it see it.
 *
 * The engine keeps its records to itself (deps_priv.h).  A layer above
 * announces each change of a cached block's bytes with buf_update(),
 * naming the updates the change must wait for, and gets back the update
 * that carries it, for later changes to wait for; the engine decides
 * what each write of the block carries (deps.c explains how).  Besides
 * that, a layer may:
 *   - ask what is pending: over a byte range of a block, of a kind, or
 *     whether one update still is (deps_last_over(), deps_waits_over(),
 *     deps_pending_kind(), deps_collect(), deps_is_pending());
 *   - file an update under a key and ask later for the newest pending one
 *     filed there, or every one (deps_note(), deps_noted(),
 *     deps_noted_all());
 *   - defer work until updates are on disk (deps_defer());
 *   - write a set of updates, with what they wait for (deps_flush_set()),
 *     one epoch (deps_epoch()), or everything (deps_drain());
 *   - forget: the updates of a freed block (deps_cancel()), or of a range
 *     that never reached the disk (deps_forget_new()).
 * The write-back policy of the three modes is writeback.c's.
 */
#ifndef SUFS_ENGINE_H
#define SUFS_ENGINE_H

#include <stddef.h>
#include <stdint.h>

struct sufs_fs;
struct sufs_stats;
struct buf;

typedef uint64_t upd_id;         /* 0: nothing (or something already on disk) */

/* Update kinds: the 1999 paper's names, shown by the tools (deps.c says
 * which two also steer the engine). */
enum upd_kind {
	UPD_BMSAFEMAP,  /* bitmap bit */
	UPD_INODEDEP,   /* inode fields */
	UPD_ALLOCDIRECT,/* block pointer in an inode */
	UPD_INDIRDEP,   /* a new indirect block's contents */
	UPD_ALLOCINDIR, /* block pointer in an indirect block */
	UPD_DIRADD,     /* new directory entry */
	UPD_MKDIR,      /* a new directory's first block */
	UPD_DIRREM,     /* removed directory entry */
	UPD_FREEBLKS,
	UPD_FREEFILE,
	UPD_DATA,       /* file data */
	UPD_COPYONWRITE,/* a block's old contents, until a snapshot's copy is on disk */
	UPD_EXTATTR,    /* extended attributes: in an inode, or an attribute block */
};

/*
 * A set of updates to wait for, built up by an operation.  The longest an
 * operation builds in id[] is a write's: each of the inode's 15 block
 * pointers waits for its block's bitmap bit and contents; the others are
 * a few.  A set that would overflow is a bug: waits_add() asserts.  A
 * wait for a number of updates known only at run time (rmdir, for the
 * names renamed out of its directory; a rename, for the new directories
 * above its new name) is handed as an array in more: the caller's, which
 * buf_update() only reads.
 */
#define DEPS_MAX_WAITS 32
struct waits {
	unsigned n;
	upd_id id[DEPS_MAX_WAITS];
	upd_id *more;
	size_t nmore;
};
void waits_add(struct waits *w, upd_id id);

/* Set up and tear down the engine of fs.  order_lost is called before the
 * first write made after memory for the ordering ran out: the image must
 * say so first (the superblock's needs-full-check flag). */
int deps_init(struct sufs_fs *fs, int (*order_lost)(struct sufs_fs *fs));
void deps_destroy(struct sufs_fs *fs);
/* Bytes of engine state the cache keeps with each buffer. */
size_t deps_buf_extra(void);

/* Announce a change of [off, off+len) of b that waits for w (may be NULL),
 * before making it; the update that carries it. */
upd_id buf_update(struct sufs_fs *fs, struct buf *b, uint32_t off, uint32_t len,
		  enum upd_kind kind, const struct waits *w);
/* Announce that the counter at [off, off+len) of b (little-endian, at most
 * 8 bytes: a link count) goes up by delta, or down, waiting for w, before
 * making the change.  Changes of one counter commute: they never wait for
 * each other, so a count raised, lowered and raised again by operations
 * that wait for different things makes no chain. */
upd_id buf_count(struct sufs_fs *fs, struct buf *b, uint32_t off, uint32_t len, int32_t delta,
		 enum upd_kind kind, const struct waits *w);
/* The newest pending update of b that overlaps [off, off+len), or 0 (to
 * wait for whatever is pending there: it waits for every older change of
 * those bytes, except the other changes of a counter, which a change of
 * all the bytes, such as an inode's zeroing, does wait for). */
upd_id deps_last_over(const struct buf *b, uint32_t off, uint32_t len);
/* Does a pending update that may be undone overlap [off, off+len), waiting
 * for an update of one of kinds (DEPS_KIND() bits) on another block,
 * directly or through updates of its own block of one of through?  (A
 * change there would wait for it, and so for that one: a directory's slot
 * whose old name's removal waits for a new name elsewhere, or for an
 * update of its own block that does.)  Past 32 updates read, yes. */
int deps_waits_over(struct sufs_fs *fs, const struct buf *b, uint32_t off, uint32_t len,
		    unsigned kinds, unsigned through);
/* The pending update of kind on b (the oldest), or 0. */
upd_id deps_pending_kind(const struct buf *b, enum upd_kind kind);
/* Is update id still pending (not on disk, nor forgotten)? */
int deps_is_pending(struct sufs_fs *fs, upd_id id);
/* Does b carry pending updates? */
int deps_block_pending(const struct buf *b);

/* Call fn for every pending update of b over [off, off+len), or (b NULL)
 * for every pending update of the file system whose kind is in the mask
 * (bit 1 << kind), with its block and range; fn returning nonzero stops
 * the walk and that value is returned. */
typedef int (*deps_collect_fn)(void *arg, struct buf *b, uint32_t off, uint32_t len,
			       upd_id id);
int deps_collect(struct sufs_fs *fs, struct buf *b, uint32_t off, uint32_t len,
		 unsigned kinds, deps_collect_fn fn, void *arg);
#define DEPS_KIND(k) (1u << (k))

/* File update id under key; deps_noted() is the newest pending update
 * filed under key, or 0; deps_noted_all() every one, in a new array
 * (*ids, NULL when none; -ENOMEM).  (A note goes when its update reaches
 * the disk.)  -ENOMEM when it cannot be filed. */
int deps_note(struct sufs_fs *fs, uint64_t key, upd_id id);
upd_id deps_noted(struct sufs_fs *fs, uint64_t key);
int deps_noted_all(struct sufs_fs *fs, uint64_t key, upd_id **ids, size_t *n);

/* Run fn(fs, arg) once every update in waits is on disk: at once when all
 * are.  fn owns arg; fn(NULL, arg) means the work is dropped and only
 * frees arg.  -ENOMEM: dropped (what it would have freed is leaked). */
int deps_defer(struct sufs_fs *fs, const upd_id *waits, unsigned nwaits,
	       int (*fn)(struct sufs_fs *, void *), void *arg);

/* One epoch: the write images of the dirty buffers want() selects (NULL:
 * all), a barrier (unless barrier is 0, async), then what went out is on
 * disk.  The number of blocks written, or an error. */
int deps_epoch(struct sufs_fs *fs, int (*want)(struct sufs_fs *, struct buf *, void *),
	       void *arg, int barrier);
/* Epochs until nothing is pending and no work is deferred. */
int deps_drain(struct sufs_fs *fs);
/* Write what deferred work waits for, and let it run (the frees a full
 * file system waits for): 1 when some ran, 0 when none was waiting, or an
 * error. */
int deps_flush_deferred(struct sufs_fs *fs);
/* Epochs that write the given updates and what they wait for (fsync, sync
 * mode); ids is scratch, freed here. */
int deps_flush_set(struct sufs_fs *fs, upd_id *ids, size_t n);

/* b's block was freed: nothing it carries matters any more. */
void deps_cancel(struct sufs_fs *fs, struct buf *b);
/* Forget the updates of [off, off+len) of b as never made, when that range
 * never reached the disk (deps.c says when): 1 when forgotten, else 0.
 * What waits for them must lie on blocks of after_type; such an update
 * (a name) is forgotten too when newer ones over it cover its first key
 * bytes (the inode number). */
int deps_forget_new(struct sufs_fs *fs, struct buf *b, uint32_t off, uint32_t len,
		    int after_type, uint32_t key);
/* Take back the updates of [off, off+len) of b, the range left as a write
 * with them undone would carry it, into out (deps.c says when): 1 when
 * possible (and, with apply, done), else 0. */
int deps_take_back(struct sufs_fs *fs, struct buf *b, uint32_t off, uint32_t len,
		   uint8_t *out, int apply);

/* How much is pending, whether work is deferred, whether the ordering was
 * lost (memory ran out), whether an epoch failed. */
uint64_t deps_pending_count(struct sufs_fs *fs);
int deps_deferred_work(struct sufs_fs *fs);
int deps_order_was_lost(struct sufs_fs *fs);
/* The engine's counters (sufs_get_stats()). */
void deps_get_stats(struct sufs_fs *fs, struct sufs_stats *st);

/* Check the invariants (deps.c): 0, or -EFAULT with which one failed, for
 * which update, in why. */
int deps_check(struct sufs_fs *fs, char *why, size_t size);
const char *deps_kind_name(unsigned kind);

#endif /* SUFS_ENGINE_H */
