/*
 * dir.c - directory entries.
 *
 * A directory is a file of whole blocks.  Each block holds variable-length
 * entries (inode, rec_len, name_len, file type, name) that tile the block up
 * to its 8-byte checksum tail; an entry never straddles a block.  An entry
 * with inode number 0 is a free slot.  Every entry is checked before it is
 * trusted (dir_block_check), so a hostile block cannot make us read past
 * its end.
 */
#include "config.h"
#include "sufs_int.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/stat.h>

/* The byte range of a directory block that holds entries. */
static uint32_t dir_data_end(uint32_t bsize)
{
	return bsize - SUFS_DIR_TAIL_SIZE;
}

/* Get directory block lblk, checked.  A hole in a directory is corruption. */
static int dir_block(struct sufs_fs *fs, uint32_t dir, const struct sufs_inode *din,
		     uint64_t lblk, struct buf **out)
{
	uint64_t pblk;
	struct buf *b;
	int err = bmap_get(fs, din, lblk, &pblk);

	if (err)
		return err;
	if (!pblk)
		return -SUFS_ECORRUPT;
	err = buf_get(fs, pblk, BUF_DIR, &b);
	if (err)
		return err;
	if (b->csum_bad && !(fs->flags & SUFS_OPEN_IGNORE_CSUM)) {
		buf_put(fs, b);
		return -SUFS_ECHECKSUM;
	}
	if (b->dir_bad) {
		buf_put(fs, b);
		return -SUFS_ECORRUPT;
	}
	b->owner = dir;
	*out = b;
	return 0;
}

static int dir_nblocks(struct sufs_fs *fs, const struct sufs_inode *din, uint64_t *n)
{
	if (!S_ISDIR(din->mode))
		return -ENOTDIR;
	if (din->size % fs->bsize || din->size / fs->bsize > inode_max_blocks(fs))
		return -SUFS_ECORRUPT;
	*n = din->size / fs->bsize;
	return 0;
}

int dir_iterate(struct sufs_fs *fs, uint32_t dir, const struct sufs_inode *din,
		sufs_dirent_fn fn, void *arg)
{
	uint64_t n, lblk;
	uint32_t off, end = dir_data_end(fs->bsize);
	struct buf *b;
	int rc = dir_nblocks(fs, din, &n);

	for (lblk = 0; lblk < n && !rc; lblk++) {
		rc = dir_block(fs, dir, din, lblk, &b);
		if (rc)
			break;
		for (off = 0; off < end && !rc; off += get16(b->data + off + DE_RECLEN)) {
			const uint8_t *de = b->data + off;
			uint32_t ino = get32(de + DE_INO);
			if (ino)
				rc = fn(arg, (const char *)de + DE_NAME, de[DE_NAMELEN], ino,
					de[DE_FTYPE]);
		}
		buf_put(fs, b);
	}
	return rc;
}

struct find {
	const char *name;
	size_t len;
	uint32_t ino;
};

/* A dirhash candidate, checked against the entry's bytes. */
struct hfind {
	struct sufs_fs *fs;
	uint32_t dir;
	const struct sufs_inode *din;
	const char *name;
	size_t len;
	struct buf *b;     /* the block of the entry found, referenced */
	uint32_t lblk, off;
	int err;
};

static int hfind_fn(void *arg, uint32_t lblk, uint32_t off)
{
	struct hfind *f = arg;
	struct buf *b;
	const uint8_t *de;

	f->err = dir_block(f->fs, f->dir, f->din, lblk, &b);
	if (f->err)
		return 1;
	de = b->data + off;
	if (off + SUFS_DIRENT_HDR <= dir_data_end(f->fs->bsize) && get32(de + DE_INO) &&
	    de[DE_NAMELEN] == f->len && off + SUFS_DIRENT_HDR + f->len <= f->fs->bsize &&
	    !memcmp(de + DE_NAME, f->name, f->len)) {
		f->b = b;
		f->lblk = lblk;
		f->off = off;
		return 1;
	}
	buf_put(f->fs, b);
	return 0;
}

/* Look a name up through the directory's index: 1 found (f->b held),
 * 0 not there, <0 error. */
static int hashed_find(struct sufs_fs *fs, struct dirhash *h, uint32_t dir,
		       const struct sufs_inode *din, const char *name, size_t len, struct hfind *f)
{
	*f = (struct hfind){ fs, dir, din, name, len, NULL, 0, 0, 0 };
	dirhash_lookup(h, name, len, hfind_fn, f);
	if (f->err)
		return f->err;
	return f->b != NULL;
}

static int find_fn(void *arg, const char *name, size_t len, uint32_t ino, unsigned ftype)
{
	struct find *f = arg;
	(void)ftype;
	if (len == f->len && memcmp(name, f->name, len) == 0) {
		f->ino = ino;
		return 1;
	}
	return 0;
}

int dir_lookup(struct sufs_fs *fs, uint32_t dir, const struct sufs_inode *din,
	       const char *name, size_t len, uint32_t *ino)
{
	struct find f = { name, len, 0 };
	struct dirhash *h = S_ISDIR(din->mode) ? dirhash_get(fs, dir, din) : NULL;
	struct hfind hf;
	int rc;

	if (h) {
		rc = hashed_find(fs, h, dir, din, name, len, &hf);
		if (rc <= 0)
			return rc ? rc : -ENOENT;
		*ino = get32(hf.b->data + hf.off + DE_INO);
		buf_put(fs, hf.b);
		return 0;
	}
	rc = dir_iterate(fs, dir, din, find_fn, &f);

	if (rc < 0)
		return rc;
	if (!f.ino)
		return -ENOENT;
	*ino = f.ino;
	return 0;
}

/*
 * Write an entry's header and name at off, then its inode number.  An
 * entry whose inode number is 0 is a harmless free slot on disk, so the
 * header goes in first with inode number 0 (the slot may hold any bytes: a
 * removed name's), waiting only for the carving that made its slot (carve,
 * 0 if none: the record before must reach it on disk); and the inode
 * number, from 0, waits for the header and for w (the inode, or its raised
 * link count); undone, it reads as 0.  Each carving waits for the record
 * length of the entry it shortens, so every entry on disk is reachable.
 */
static upd_id put_entry(struct sufs_fs *fs, struct buf *b, uint32_t off, uint32_t reclen,
			const char *name, size_t len, uint32_t ino, unsigned ftype,
			upd_id carve, const struct waits *w)
{
	struct waits hw = { 0 }, iw = { 0 };
	uint8_t *de = b->data + off;
	upd_id id;

	if (w)
		iw = *w;
	waits_add(&hw, carve);
	waits_add(&iw, buf_update(fs, b, off, (uint32_t)(SUFS_DIRENT_HDR + len), UPD_DIRADD,
				  &hw));
	put32(de + DE_INO, 0);
	put16(de + DE_RECLEN, (uint16_t)reclen);
	de[DE_NAMELEN] = (uint8_t)len;
	de[DE_FTYPE] = (uint8_t)ftype;
	memcpy(de + DE_NAME, name, len);
	id = buf_update(fs, b, off + DE_INO, 4, UPD_DIRADD, &iw);
	put32(de + DE_INO, ino);
	return id;
}

/* Add a new block to the directory, one free entry spanning it.  The
 * pointer to it waits for it, and the directory's new size for the
 * pointer: iw, which the directory inode's store waits for, gets both the
 * inode's own pointers' waits and the updates of pointers in indirect
 * blocks, so that no crash shows a size past the blocks mapped. */
static int dir_grow(struct sufs_fs *fs, uint32_t dir, struct sufs_inode *din,
		    struct waits *iw, struct buf **out)
{
	uint64_t lblk = din->size / fs->bsize, pblk, goal = inode_goal(fs, dir);
	struct waits pw = { 0 };
	struct buf *b;
	int err;

	if (lblk && bmap_get(fs, din, lblk - 1, &goal) == 0 && goal)
		goal++;
	err = bmap_room(fs, din, lblk, 1);
	if (!err)
		err = block_new(fs, goal, BUF_DIR, UPD_MKDIR, &pblk, &b, &pw);
	if (err)
		return err;
	put16(b->data + DE_RECLEN, (uint16_t)dir_data_end(fs->bsize));
	b->owner = dir;
	err = bmap_set(fs, din, lblk, pblk, goal, &pw, iw, iw);
	if (err) {
		buf_put(fs, b);
		return err;
	}
	din->size += fs->bsize;
	*out = b;
	return 0;
}

/* ---- where each inode was last named --------------------------------------- */

static size_t hint_slot(const struct sufs_fs *fs, uint32_t ino)
{
	size_t mask = fs->capparents - 1, i = (ino * 2654435761u) & mask;

	while (fs->parents[i].ino && fs->parents[i].ino != ino)
		i = (i + 1) & mask;
	return i;
}

/* Remember that ino was just named in dir (a hint: nothing breaks when it
 * is lost for want of memory, fsync just walks up less far). */
static void parent_note(struct sufs_fs *fs, uint32_t ino, uint32_t dir)
{
	size_t i;

	if (2 * (fs->nparents + 1) > fs->capparents) {
		size_t cap = fs->capparents ? 2 * fs->capparents : 256, j;
		struct parent_hint *old = fs->parents, *p = calloc(cap, sizeof(*p));
		if (!p)
			return;
		fs->parents = p;
		j = fs->capparents;
		fs->capparents = cap;
		while (j--)
			if (old[j].ino)
				fs->parents[hint_slot(fs, old[j].ino)] = old[j];
		free(old);
	}
	i = hint_slot(fs, ino);
	if (!fs->parents[i].ino)
		fs->nparents++;
	fs->parents[i] = (struct parent_hint){ ino, dir };
}

uint32_t parent_hint(const struct sufs_fs *fs, uint32_t ino)
{
	return fs->capparents ? fs->parents[hint_slot(fs, ino)].dir : 0;
}

/* The updates of names, which a slot's old name may wait for (dir_add()). */
#define NAME_KINDS (DEPS_KIND(UPD_DIRADD) | DEPS_KIND(UPD_DIRREM) | DEPS_KIND(UPD_MKDIR))

/* Where dir_add() puts a name: a slot, and the first one passed over. */
struct place {
	uint64_t lblk, busy_lblk;       /* UINT64_MAX: none */
	uint32_t off, busy_off;
};

/*
 * One pass over the directory both checks that the name is new (h: the
 * index did) and finds the first slot with room for need bytes: a free
 * entry, or the slack after a live one.
 *
 * A slot whose bytes a pending update still covers that may be undone and
 * waits for a name in another block (a name renamed away, whose removal
 * waits for the new name elsewhere), or for an update of its own block
 * that does (a name made in a slot passed over, and renamed away in its
 * turn: its own new name may be forgotten with its file), is passed over:
 * the new entry would wait for that removal, and so for the new name,
 * which may itself wait for a slot of the same kind, a chain as long as
 * the renames pending and one epoch per link at sync.  Such a slot is free
 * again once its block is written; until then the name goes to the next
 * slot, or to a new block, or, when no block is left to grow by, to the
 * first slot passed over.
 */
static int find_slot(struct sufs_fs *fs, uint32_t dir, const struct sufs_inode *din,
		     struct dirhash *h, const char *name, size_t len, struct place *s)
{
	uint32_t need = dirent_size((uint32_t)len), end = dir_data_end(fs->bsize);
	uint32_t off, reclen, used, room;
	uint64_t n = din->size / fs->bsize, lblk = 0; /* dir_nblocks() checked it */
	struct buf *b;
	int rc;

	*s = (struct place){ UINT64_MAX, UINT64_MAX, 0, 0 };
	if (h) { /* only the blocks with room */
		room = dirhash_find_room(h, need);
		lblk = room == UINT32_MAX ? n : room;
	}
	while (lblk < n) {
		rc = dir_block(fs, dir, din, lblk, &b);
		if (rc)
			return rc;
		for (off = 0; off < end; off += reclen) {
			const uint8_t *de = b->data + off;
			uint32_t eino = get32(de + DE_INO);
			reclen = get16(de + DE_RECLEN);
			used = eino ? dirent_size(de[DE_NAMELEN]) : 0;
			if (!h && eino && de[DE_NAMELEN] == len && !memcmp(de + DE_NAME, name, len)) {
				buf_put(fs, b);
				return -EEXIST;
			}
			if (s->lblk != UINT64_MAX || reclen - used < need)
				continue;
			if (!deps_waits_over(fs, b, off + used, need, NAME_KINDS,
					     DEPS_KIND(UPD_DIRREM))) {
				s->lblk = lblk;
				s->off = off;
			} else if (s->busy_lblk == UINT64_MAX) {
				s->busy_lblk = lblk;
				s->busy_off = off;
			}
		}
		buf_put(fs, b);
		if (!h)
			lblk++;
		else if (s->lblk == UINT64_MAX)
			lblk = dirhash_room_after(h, need, (uint32_t)lblk);
		else
			break;
	}
	return 0;
}

/*
 * Add name -> ino, the inode number waiting for w, in the slot
 * find_slot() chose.  When the directory grows, din changes and iw
 * collects what its store must wait for.
 */
int dir_add(struct sufs_fs *fs, uint32_t dir, struct sufs_inode *din, const char *name,
	    size_t len, uint32_t ino, unsigned ftype, const struct waits *w, struct waits *iw,
	    upd_id *id)
{
	uint32_t off, reclen, used;
	uint64_t n, slot_lblk;
	upd_id carve = 0, e;
	struct waits ew = { 0 };
	struct dirhash *h;
	struct hfind hf;
	struct place s;
	struct buf *b;
	int rc;

	if (len == 0 || len > SUFS_NAME_MAX || memchr(name, '/', len) || memchr(name, 0, len))
		return len > SUFS_NAME_MAX ? -ENAMETOOLONG : -EINVAL;
	rc = dir_nblocks(fs, din, &n);
	if (rc)
		return rc;
	h = dirhash_get(fs, dir, din);
	if (h) {
		rc = hashed_find(fs, h, dir, din, name, len, &hf);
		if (rc) {
			if (rc > 0)
				buf_put(fs, hf.b);
			return rc > 0 ? -EEXIST : rc;
		}
	}
	rc = find_slot(fs, dir, din, h, name, len, &s);
	if (rc)
		return rc;
	slot_lblk = s.lblk;
	off = s.off;
	if (slot_lblk == UINT64_MAX) {
		slot_lblk = n;
		rc = dir_grow(fs, dir, din, iw, &b);
		off = 0;
		if (!rc) {
			/* stored now, so that the name can wait for its block's
			 * pointer (below) */
			rc = inode_store(fs, dir, din, UPD_INODEDEP, iw, NULL);
			iw->n = 0;
			if (rc)
				buf_put(fs, b);
		}
		if (rc == -ENOSPC && s.busy_lblk != UINT64_MAX) {
			/* no block to grow by: the slot passed over will do */
			slot_lblk = s.busy_lblk;
			off = s.busy_off;
			rc = dir_block(fs, dir, din, slot_lblk, &b);
		}
	} else {
		rc = dir_block(fs, dir, din, slot_lblk, &b);
	}
	if (rc)
		return rc;
	reclen = get16(b->data + off + DE_RECLEN);
	if (get32(b->data + off + DE_INO)) {
		/* carve the new entry out of the live entry's slack, once that
		 * entry's record length is on disk (not its inode number): the
		 * update that wrote it, if pending, either may be undone, and
		 * the carving, over the same bytes, waits for it (rule (2) of
		 * deps.c), or never is, and every write of this block carries it */
		used = dirent_size(b->data[off + DE_NAMELEN]);
		carve = buf_update(fs, b, off + DE_RECLEN, 2, UPD_DIRADD, NULL);
		put16(b->data + off + DE_RECLEN, (uint16_t)used);
		off += used;
		reclen -= used;
	}
	/* a name is on disk only once it is reachable: it waits for the
	 * pointers that map its block, if pending (the directory grew by it
	 * lately), so that what waits for the name (a moved directory's "..",
	 * a rename's removal of the old name) waits for them too.  w is a few
	 * waits (the inode, its link count): there is room. */
	if (w)
		ew = *w;
	rc = bmap_path_waits(fs, dir, din, slot_lblk, &ew);
	if (rc) {
		buf_put(fs, b);
		return rc;
	}
	e = put_entry(fs, b, off, reclen, name, len, ino, ftype, carve, &ew);
	parent_note(fs, ino, dir);
	if (h)
		dirhash_add(fs, h, name, len, (uint32_t)slot_lblk, off, b->data);
	buf_put(fs, b);
	if (id)
		*id = e;
	return 0;
}

/* Find a live entry; *bp holds its block (referenced), *offp its offset. */
static int dir_find(struct sufs_fs *fs, uint32_t dir, const struct sufs_inode *din,
		    const char *name, size_t len, struct buf **bp, uint32_t *offp,
		    uint32_t *lblkp)
{
	uint32_t end = dir_data_end(fs->bsize), off;
	uint64_t n, lblk;
	struct dirhash *h;
	struct hfind hf;
	struct buf *b;
	int rc = dir_nblocks(fs, din, &n);

	h = rc ? NULL : dirhash_get(fs, dir, din);
	if (h) {
		rc = hashed_find(fs, h, dir, din, name, len, &hf);
		if (rc <= 0)
			return rc ? rc : -ENOENT;
		*bp = hf.b;
		*offp = hf.off;
		*lblkp = hf.lblk;
		return 0;
	}
	for (lblk = 0; lblk < n && !rc; lblk++) {
		rc = dir_block(fs, dir, din, lblk, &b);
		if (rc)
			return rc;
		for (off = 0; off < end; off += get16(b->data + off + DE_RECLEN)) {
			const uint8_t *de = b->data + off;
			if (get32(de + DE_INO) && de[DE_NAMELEN] == len &&
			    !memcmp(de + DE_NAME, name, len)) {
				*bp = b;
				*offp = off;
				*lblkp = (uint32_t)lblk;
				return 0;
			}
		}
		buf_put(fs, b);
	}
	return rc ? rc : -ENOENT;
}

/*
 * Point an existing name at another inode (rename over a name, a moved
 * directory's ".."), or at none (ino 0: the name is removed, a free slot
 * stays).  The change waits for w.  *old gets the inode it named.
 */
int dir_set(struct sufs_fs *fs, uint32_t dir, const struct sufs_inode *din, const char *name,
	    size_t len, uint32_t ino, unsigned ftype, enum upd_kind kind,
	    const struct waits *w, uint32_t *old, upd_id *id)
{
	struct dirhash *h;
	struct buf *b;
	uint32_t off, lblk;
	upd_id u;
	int rc = dir_find(fs, dir, din, name, len, &b, &off, &lblk);

	if (rc)
		return rc;
	*old = get32(b->data + off + DE_INO);
	/* the inode number and the file type change together, in one update:
	 * an entry never names one inode with another's type; a removal
	 * changes the number alone (and so folds into a pending add of it) */
	u = buf_update(fs, b, off, ino ? SUFS_DIRENT_HDR : 4, kind, w);
	put32(b->data + off + DE_INO, ino);
	if (ino)
		b->data[off + DE_FTYPE] = (uint8_t)ftype;
	if (!ino && (h = dirhash_get(fs, dir, din)) != NULL)
		dirhash_remove(fs, h, name, len, lblk, off, b->data);
	buf_put(fs, b);
	if (id)
		*id = u;
	return 0;
}

/* The pending update of the inode number of entry `name` (to wait for
 * it), or 0. */
int dir_entry_pending(struct sufs_fs *fs, uint32_t dir, const struct sufs_inode *din,
		      const char *name, size_t len, upd_id *id, uint32_t *lblkp)
{
	struct buf *b;
	uint32_t off, lblk;
	int rc = dir_find(fs, dir, din, name, len, &b, &off, &lblk);

	if (rc)
		return rc;
	*id = deps_last_over(b, off + DE_INO, 4);
	if (lblkp)
		*lblkp = lblk;
	buf_put(fs, b);
	return 0;
}

static int nonempty_fn(void *arg, const char *name, size_t len, uint32_t ino, unsigned ftype)
{
	(void)arg; (void)ino; (void)ftype;
	return !((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'));
}

/* 1 when the directory holds nothing but "." and "..", 0 if more. */
int dir_is_empty(struct sufs_fs *fs, uint32_t dir, const struct sufs_inode *din)
{
	int rc = dir_iterate(fs, dir, din, nonempty_fn, NULL);
	return rc < 0 ? rc : !rc;
}

/* The first block of a new directory: "." and "..", all of it one new
 * block that the inode's pointer (through iw) waits for. */
int dir_init(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in, uint32_t parent,
	     struct waits *iw)
{
	struct buf *b;
	uint32_t dot = dirent_size(1);
	int err = dir_grow(fs, ino, in, iw, &b);

	if (err)
		return err;
	put_entry(fs, b, 0, dot, ".", 1, ino, SUFS_FT_DIR, 0, NULL);
	put_entry(fs, b, dot, dir_data_end(fs->bsize) - dot, "..", 2, parent, SUFS_FT_DIR, 0, NULL);
	buf_put(fs, b);
	return 0;
}
