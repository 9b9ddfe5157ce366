/*
 * pass2.c - pass 2: every directory block, and every entry in it.
 *
 * For each directory pass 1 found, in inode order, each block its size
 * covers (a hole is filled with an empty block): its structure (entries
 * that tile it; a malformed block keeps the entries before the first bad
 * one), its checksum, '.' and '..' at the head of block 0, and each entry:
 * its name, the inode it names (in range, in use, not the root), its file
 * type, a name given twice in the directory (names.c), a second name of a
 * directory.  Names are counted per inode for pass 4, and where each
 * directory is named, and what its '..' says, for pass 3.  A block's
 * repairs are made in place and announced in one update once it is done.
 */
#include "config.h"
#include "check_int.h"

#include <errno.h>
#include <stdio.h>

/* Check that entries tile the block; *bad gets the offset of the first bad
 * one.  Names are judged later, entry by entry. */
static const char *dir_structure(const uint8_t *blk, uint32_t bsize, uint32_t *bad)
{
	uint32_t off = 0, end = bsize - SUFS_DIR_TAIL_SIZE, reclen, namelen;

	while (off < end) {
		*bad = off;
		if (end - off < SUFS_DIRENT_HDR)
			return "entry header crosses the end";
		reclen = get16(blk + off + DE_RECLEN);
		namelen = blk[off + DE_NAMELEN];
		if (reclen < SUFS_DIRENT_HDR || reclen % 8 || reclen > end - off)
			return "bad entry length";
		if (get32(blk + off + DE_INO) && (namelen == 0 || dirent_size(namelen) > reclen))
			return "bad name length";
		off += reclen;
	}
	return NULL;
}

/* Keep the well-formed entries before bad, and make a free slot of the
 * rest of the block. */
static void dir_salvage(uint8_t *blk, uint32_t bsize, uint32_t bad)
{
	uint32_t end = bsize - SUFS_DIR_TAIL_SIZE;

	memset(blk + bad, 0, end - bad);
	put16(blk + bad + DE_RECLEN, (uint16_t)(end - bad));
}

static void put_dirent(uint8_t *de, uint32_t ino, uint32_t reclen, const char *name,
		       unsigned ftype)
{
	size_t len = strlen(name);

	put32(de + DE_INO, ino);
	put16(de + DE_RECLEN, (uint16_t)reclen);
	de[DE_NAMELEN] = (uint8_t)len;
	de[DE_FTYPE] = (uint8_t)ftype;
	memcpy(de + DE_NAME, name, len);
}

/* An empty directory block: a free slot, or '.' and '..' for block 0. */
void dir_fresh(uint8_t *blk, uint32_t bsize, uint32_t self, uint32_t parent, int first)
{
	uint32_t end = bsize - SUFS_DIR_TAIL_SIZE;

	memset(blk, 0, bsize);
	if (!first) {
		put16(blk + DE_RECLEN, (uint16_t)end);
		return;
	}
	put_dirent(blk, self, 16, ".", SUFS_FT_DIR);
	put_dirent(blk + 16, parent, end - 16, "..", SUFS_FT_DIR);
}

/* Does entry de hold name? */
int is_name(const uint8_t *de, const char *name)
{
	size_t len = strlen(name);
	return de[DE_NAMELEN] == len && memcmp(de + DE_NAME, name, len) == 0;
}

/*
 * Pass 2 is about to change the directory block it checks.  Its changes are
 * announced in one update once the block is done, so the first one goes
 * through buf_touch() before it is made: a snapshot that needs the block
 * copies it as it was, not as repaired.
 */
static void dir_changing(struct chk *c, int *modified)
{
	if (!*modified)
		buf_touch(c->fs, c->cur_buf);
	*modified = 1;
}

/* ---- '.' and '..' -------------------------------------------------------- */

/* '.' and '..' name directories: their file type says so. */
static void dot_type(struct chk *c, struct dirinfo *d, uint8_t *de, const char *name,
		     int *modified)
{
	struct pctx x = { .ino = get32(de + DE_INO), .dir = d->ino, .str = name,
			  .num = de[DE_FTYPE], .num2 = SUFS_FT_DIR };

	if (de[DE_FTYPE] != SUFS_FT_DIR && fix_problem(c, SUFS_PR_ENTRY_FTYPE, &x)) {
		dir_changing(c, modified);
		de[DE_FTYPE] = SUFS_FT_DIR;
	}
}

/*
 * '.' and '..' head block 0.  When they do not, rebuild the head: '.'
 * (16 bytes) and '..' up to the first entry that starts at byte 32 or
 * later; whatever else started in those 32 bytes is lost (its inode comes
 * back through pass 4).  Returns the offset where the other entries start.
 */
static uint32_t check_dots(struct chk *c, struct dirinfo *d, uint8_t *blk, int *modified)
{
	uint32_t bsize = c->fs->bsize, end = bsize - SUFS_DIR_TAIL_SIZE;
	uint32_t r0 = get16(blk + DE_RECLEN), off, next, dotdot = 0;
	struct pctx x = { .ino = d->ino };
	int dot_ok, dotdot_ok;

	dot_ok = get32(blk + DE_INO) && is_name(blk, ".");
	dotdot_ok = dot_ok && r0 < end && get32(blk + r0 + DE_INO) && is_name(blk + r0, "..");
	if (dot_ok && dotdot_ok) {
		x.ino2 = get32(blk + DE_INO);
		if (x.ino2 != d->ino && fix_problem(c, SUFS_PR_BAD_DOT, &x)) {
			dir_changing(c, modified);
			put32(blk + DE_INO, d->ino);
		}
		dot_type(c, d, blk, ".", modified);
		dot_type(c, d, blk + r0, "..", modified);
		d->dotdot = get32(blk + r0 + DE_INO);
		return r0 + get16(blk + r0 + DE_RECLEN);
	}
	if (!fix_problem(c, dot_ok ? SUFS_PR_NO_DOTDOT : SUFS_PR_NO_DOT, &x)) {
		d->dotdot = 0;
		return dot_ok ? r0 : 0;
	}
	/* keep a '..' that is merely out of place */
	for (off = 0; off < end; off += get16(blk + off + DE_RECLEN))
		if (get32(blk + off + DE_INO) && is_name(blk + off, ".."))
			dotdot = get32(blk + off + DE_INO);
	/* a '..' naming no inode would be a free slot, and taken: name the
	 * root until pass 3 knows the parent */
	if (!dotdot)
		dotdot = SUFS_ROOT_INO;
	for (next = 0; next < 32 && next < end; next += get16(blk + next + DE_RECLEN))
		;
	dir_changing(c, modified);
	if (next >= end) {
		dir_fresh(blk, bsize, d->ino, dotdot, 1);
		next = end;
	} else {
		put_dirent(blk, d->ino, 16, ".", SUFS_FT_DIR);
		memset(blk + 16, 0, 16);
		put_dirent(blk + 16, dotdot, next - 16, "..", SUFS_FT_DIR);
	}
	d->dotdot = dotdot;
	return next;
}

/* ---- a directory named twice --------------------------------------------- */

/* What the '..' of directory t names, as its first block holds it now
 * (0: it has no readable '..'). */
static uint32_t peek_dotdot(struct chk *c, const struct dirinfo *t)
{
	struct sufs_fs *fs = c->fs;
	uint32_t end = fs->bsize - SUFS_DIR_TAIL_SIZE, r0, ino = 0;
	struct sufs_inode in;
	struct buf *b;
	uint64_t pblk;

	if (inode_load(fs, t->ino, &in) != 0 || bmap_get(fs, &in, 0, &pblk) != 0 || !pblk ||
	    pblk >= c->nblocks || buf_get(fs, pblk, BUF_DIR, &b) != 0)
		return 0;
	r0 = get16(b->data + DE_RECLEN);
	if (is_name(b->data, ".") && r0 >= SUFS_DIRENT_HDR && r0 < end &&
	    get16(b->data + r0 + DE_RECLEN) >= SUFS_DIRENT_HDR &&
	    get16(b->data + r0 + DE_RECLEN) <= end - r0 && is_name(b->data + r0, ".."))
		ino = get32(b->data + r0 + DE_INO);
	buf_put(fs, b);
	return ino;
}

/*
 * Directory t, already named in t->parent, is named again in d.  A rename
 * that moves a directory writes its new name first, then its '..', and
 * removes its old name last, so a crash between leaves two names, and the
 * one in the directory its '..' names is the one that counts: the other is
 * left over, a leak like a link count too high.  When '..' names neither
 * directory the second name is damage (a hard link to a directory).
 * Returns 1 when the entry in d is to be cleared, -1 when it should be but
 * the answer was no, and 0 when it stays and the earlier name is the one
 * left over (removed if the answer is yes; either way counted as gone, so
 * that what passes 3 and 4 report is what a repair leaves).
 */
static int second_name(struct chk *c, struct dirinfo *d, struct dirinfo *t, struct pctx *x)
{
	struct sufs_fs *fs = c->fs;
	uint32_t dotdot = peek_dotdot(c, t), len;
	char old[SUFS_NAME_MAX + 1];
	struct pctx y = { .ino = t->ino, .dir = t->parent, .str = old };
	struct dirinfo *p;
	struct buf *b;
	uint8_t *e;

	if (dotdot == t->parent)
		return fix_problem(c, SUFS_PR_DIR_STALE_NAME, x) ? 1 : -1;
	if (dotdot != d->ino || t->name_blk == 0 || buf_get(fs, t->name_blk, BUF_DIR, &b) != 0)
		return fix_problem(c, SUFS_PR_ENTRY_DIR_LINK, x) ? 1 : -1;
	e = b->data + t->name_off;
	len = e[DE_NAMELEN];
	memcpy(old, e + DE_NAME, len);
	old[len] = 0;
	if (fix_problem(c, SUFS_PR_DIR_STALE_NAME, &y) && get32(e + DE_INO) == t->ino) {
		/* announced first: a snapshot copies the block as it was */
		buf_update(fs, b, 0, fs->bsize, UPD_DIRREM, NULL);
		put32(e + DE_INO, 0);
		b->type = BUF_DIR;
		b->csum_bad = 0;
		b->dir_bad = 0;
	}
	buf_put(fs, b);
	uncount_link(c, t->ino);
	p = dir_find_info(c, t->parent);
	if (p && p->entries)
		p->entries--;
	return 0;
}

/* ---- a name given twice -------------------------------------------------- */

/*
 * Entry de has a name an earlier entry of the directory has (naming inode
 * first).  A second entry for the same inode goes: pass 4 counts one name
 * fewer.  An entry for another inode is renamed, as e2fsck does: ~0, ~1,
 * ... is added to its name, the first such number not taken (when the entry
 * has no room for a longer name, the end of the name is replaced).
 * Returns 1 when the entry is to be cleared, else 0 (renamed, or left as
 * it is).
 */
static int dup_name(struct chk *c, uint8_t *de, uint32_t first, struct pctx *x,
		    int *modified)
{
	struct nameset *ns = &c->names;
	uint32_t len = de[DE_NAMELEN], reclen = get16(de + DE_RECLEN), keep, newlen = 0;
	uint8_t cand[SUFS_NAME_MAX + 1];
	char shown[SUFS_NAME_MAX + 1], suffix[24];
	size_t k;
	int n, found = 0;

	x->ino2 = first;
	if (first == x->ino)
		return fix_problem(c, SUFS_PR_ENTRY_DUP, x);
	/* of ns->n + 1 candidates one is free; the numbers go on from the last
	 * rename's, so that a directory of one name many times is not
	 * quadratic */
	for (k = ns->suffix; k <= ns->suffix + ns->n && !found; k++) {
		n = snprintf(suffix, sizeof(suffix), "~%zu", k);
		if (len + (uint32_t)n <= SUFS_NAME_MAX && dirent_size(len + (uint32_t)n) <= reclen)
			keep = len;
		else if (len >= (uint32_t)n)
			keep = len - (uint32_t)n;
		else
			break; /* no room for a longer name: the entry goes */
		newlen = keep + (uint32_t)n;
		memcpy(cand, de + DE_NAME, keep);
		memcpy(cand + keep, suffix, (size_t)n);
		found = !names_has(ns, cand, newlen);
	}
	if (!found)
		return fix_problem(c, SUFS_PR_ENTRY_DUP, x);
	ns->suffix = k;
	memcpy(shown, cand, newlen);
	shown[newlen] = 0;
	x->str2 = shown;
	if (!fix_problem(c, SUFS_PR_ENTRY_DUP_NAME, x))
		return 0;
	dir_changing(c, modified);
	memcpy(de + DE_NAME, cand, newlen);
	de[DE_NAMELEN] = (uint8_t)newlen;
	return 0;
}

/* ---- entries, blocks, directories ---------------------------------------- */

/* One entry other than '.' and '..'.  Returns 1 when it is to be cleared,
 * 0 when it stays, or -ENOMEM. */
static int check_entry(struct chk *c, struct dirinfo *d, uint8_t *de, int *modified)
{
	uint32_t ino = get32(de + DE_INO), namelen = de[DE_NAMELEN], i;
	char name[SUFS_NAME_MAX + 1];
	struct pctx x = { .ino = ino, .dir = d->ino, .str = name };
	struct dirinfo *t;
	struct nameslot *slot;
	unsigned want;
	int rc;

	memcpy(name, de + DE_NAME, namelen);
	name[namelen] = 0;
	for (i = 0; i < namelen; i++)
		if (de[DE_NAME + i] == '/' || de[DE_NAME + i] == 0)
			return fix_problem(c, SUFS_PR_ENTRY_BAD_NAME, &x);
	if ((namelen == 1 && name[0] == '.') || (namelen == 2 && name[0] == '.' && name[1] == '.'))
		return fix_problem(c, SUFS_PR_ENTRY_DOT, &x);
	if (ino < SUFS_ROOT_INO || ino > c->ninodes)
		return fix_problem(c, SUFS_PR_ENTRY_BAD_INO, &x);
	if (ino == SUFS_ROOT_INO)
		return fix_problem(c, SUFS_PR_ENTRY_ROOT, &x);
	if (!ino_ftype(c, ino))
		return fix_problem(c, SUFS_PR_ENTRY_FREE_INO, &x);
	rc = names_lookup(&c->names, de + DE_NAME, namelen, &slot);
	if (!rc && slot->off) {
		if (dup_name(c, de, names_ino(&c->names, slot), &x, modified))
			return 1;
		namelen = de[DE_NAMELEN]; /* renamed, or not (-n) */
		memcpy(name, de + DE_NAME, namelen);
		name[namelen] = 0;
		rc = names_lookup(&c->names, de + DE_NAME, namelen, &slot);
	}
	if (rc)
		return rc;
	if (!slot->off)
		names_put(&c->names, slot, de + DE_NAME, namelen, ino);
	want = ino_ftype(c, ino);
	if (want == SUFS_FT_DIR) {
		t = dir_find_info(c, ino);
		if (t && t->parent) {
			int k = second_name(c, d, t, &x);
			if (k)
				return k > 0; /* not cleared (-n): not counted either */
		}
		if (t) {
			t->parent = d->ino;
			t->name_blk = c->cur_pblk;
			t->name_off = (uint32_t)(de - c->cur_blk);
		}
	}
	x.num = de[DE_FTYPE];
	x.num2 = want;
	if (de[DE_FTYPE] != want && fix_problem(c, SUFS_PR_ENTRY_FTYPE, &x)) {
		dir_changing(c, modified);
		de[DE_FTYPE] = (uint8_t)want;
	}
	count_link(c, ino);
	d->entries++;
	note_snap_name(c, d, ino, name);
	if (c->nflagged)
		flagged_name(c, d->ino, ino, de);
	return 0;
}

static int check_dir_block(struct chk *c, struct dirinfo *d, uint64_t lblk, uint64_t pblk)
{
	struct sufs_fs *fs = c->fs;
	uint32_t bsize = fs->bsize, end = bsize - SUFS_DIR_TAIL_SIZE, off, bad = 0;
	struct pctx x = { .ino = d->ino, .blk = pblk, .num = lblk };
	const uint8_t *tail;
	const char *why;
	struct buf *b;
	uint8_t *blk;
	int modified = 0, csum_ok, rc;

	rc = buf_get(fs, pblk, BUF_DIR, &b);
	if (rc)
		return rc;
	blk = b->data;
	tail = blk + end;
	c->cur_buf = b;
	/* the cache checked it when it read it, unless it has changed since */
	csum_ok = b->csum_known ? !b->csum_bad :
		  get32(tail + DT_MAGIC) == DIR_TAIL_MAGIC &&
		  get32(tail + DT_CSUM) == sufs_dirblock_csum(blk, bsize, pblk);
	why = dir_structure(blk, bsize, &bad);
	if (why) {
		x.str = why;
		x.num2 = bad;
		if (!fix_problem(c, SUFS_PR_DIR_BLOCK_CORRUPT, &x)) {
			if (lblk == 0)
				d->dotdot = 0;
			buf_put(fs, b);
			return 0;
		}
		dir_changing(c, &modified);
		dir_salvage(blk, bsize, bad);
		csum_ok = 1; /* sealed again when written */
	}
	if (!csum_ok && fix_problem(c, SUFS_PR_DIR_CSUM, &x))
		dir_changing(c, &modified);
	c->cur_pblk = pblk;
	c->cur_blk = blk;
	off = 0;
	if (lblk == 0) {
		off = check_dots(c, d, blk, &modified);
		count_link(c, d->ino); /* its '.' */
	}
	while (off < end) {
		uint8_t *de = blk + off;
		uint32_t reclen = get16(de + DE_RECLEN);
		if (reclen < SUFS_DIRENT_HDR || reclen > end - off)
			break; /* left malformed (answered no) */
		if (get32(de + DE_INO) && (rc = check_entry(c, d, de, &modified)) != 0) {
			if (rc < 0)
				break;
			dir_changing(c, &modified);
			put32(de + DE_INO, 0);
			rc = 0;
		}
		off += reclen;
	}
	if (modified) {
		/* the write seals the block (its tail and checksum) anew */
		b->type = BUF_DIR;
		b->csum_bad = 0;
		b->dir_bad = 0;
		buf_update(fs, b, 0, bsize, UPD_DIRADD, NULL);
	}
	buf_put(fs, b);
	return rc;
}

/* A hole in a directory: a new empty block in its place. */
static int fill_hole(struct chk *c, struct dirinfo *d, struct sufs_inode *in, uint64_t lblk,
		     uint64_t *pblk)
{
	struct waits pw = { 0 }, iw = { 0 };
	struct buf *b;
	int rc;

	if (lblk >= SUFS_NDIR && (rc = prepare_alloc(c)) != 0)
		return rc; /* the path may need indirect blocks from the library */
	rc = chk_alloc_block(c, inode_goal(c->fs, d->ino), pblk);
	if (rc)
		return rc;
	rc = buf_get_new(c->fs, *pblk, BUF_DIR, &b);
	if (rc)
		return rc;
	buf_update(c->fs, b, 0, c->fs->bsize, UPD_MKDIR, NULL);
	dir_fresh(b->data, c->fs->bsize, d->ino, d->ino, lblk == 0);
	/* sealed now, not only when written: pass 2 checks it next */
	sufs_dirblock_seal(b->data, c->fs->bsize, *pblk);
	buf_put(c->fs, b);
	rc = bmap_set(c->fs, in, lblk, *pblk, *pblk, &pw, &iw, NULL);
	if (!rc)
		rc = inode_store(c->fs, d->ino, in, UPD_INODEDEP, NULL, NULL);
	if (!rc)
		rc = claim_inode(c, d->ino);
	return rc;
}

/*
 * The directories' blocks, asked of the device ahead of pass 2's reads:
 * with a cold cache, each directory block read one at a time waits a
 * disk's latency; asked for in advance, they are read many at a time.
 * `dir` and `lblk` say where the asking has got to, `asked` how many
 * blocks it has passed (pass 2 reads as many, in the same order);
 * adjacent blocks go in one request (`start`, `len`).
 */
#define PREFETCH_BLOCKS 1024u

struct prefetch {
	size_t dir;
	uint64_t lblk, asked;
	uint64_t start, len;
};

static void prefetch_flush(struct sufs_fs *fs, struct prefetch *p)
{
	if (p->len)
		sufs_dev_prefetch(fs->dev, p->start << fs->bshift, p->len << fs->bshift);
	p->len = 0;
}

/* Pass 2 is at its block `done`: ask for blocks up to PREFETCH_BLOCKS
 * beyond, once half of that is used up. */
static void prefetch_dirs(struct chk *c, struct prefetch *p, uint64_t done)
{
	struct sufs_fs *fs = c->fs;
	struct sufs_inode in;
	uint64_t n, pblk, upto = done + PREFETCH_BLOCKS;

	if (p->asked > done + PREFETCH_BLOCKS / 2)
		return;
	while (p->asked < upto && p->dir < c->ndirs) {
		if (inode_load(fs, c->dirs[p->dir].ino, &in) != 0) {
			p->dir++;
			continue;
		}
		n = in.size / fs->bsize + (in.size % fs->bsize != 0);
		for (; p->lblk < n && p->asked < upto; p->lblk++, p->asked++) {
			if (bmap_get(fs, &in, p->lblk, &pblk) != 0 || !pblk || pblk >= c->nblocks)
				continue;
			if (p->len && pblk == p->start + p->len) {
				p->len++;
				continue;
			}
			prefetch_flush(fs, p);
			p->start = pblk;
			p->len = 1;
		}
		if (p->lblk >= n) {
			p->dir++;
			p->lblk = 0;
		}
	}
	prefetch_flush(fs, p);
}

int pass2(struct chk *c)
{
	struct sufs_fs *fs = c->fs;
	struct sufs_inode in;
	struct pctx x;
	struct prefetch ahead = { 0 };
	uint64_t n, lblk, pblk, done = 0;
	size_t i;
	int rc = 0;

	for (i = 0; i < c->ndirs && !rc && !poll_stop(c); i++) {
		struct dirinfo *d = &c->dirs[i];
		rc = inode_load(fs, d->ino, &in);
		if (rc == -SUFS_ECHECKSUM)
			rc = 0;
		if (rc)
			break;
		n = in.size / fs->bsize + (in.size % fs->bsize != 0);
		names_reset(&c->names);
		for (lblk = 0; lblk < n && !rc && c->stop == GOING; lblk++) {
			prefetch_dirs(c, &ahead, done++);
			if (bmap_get(fs, &in, lblk, &pblk) != 0)
				continue; /* a bad pointer pass 1 was told to keep */
			if (!pblk) {
				x = (struct pctx){ .ino = d->ino, .num = lblk };
				if (!fix_problem(c, SUFS_PR_DIR_HOLE, &x))
					continue;
				rc = fill_hole(c, d, &in, lblk, &pblk);
				if (rc == -ENOSPC || rc == -EAGAIN) {
					fix_failed(c);
					rc = 0;
					continue;
				}
				if (rc)
					break;
			}
			rc = check_dir_block(c, d, lblk, pblk);
		}
		pass_progress(c, 2, i + 1, c->ndirs);
	}
	dirhash_drop(fs, 0); /* indexes built before the repairs are stale */
	return rc;
}
