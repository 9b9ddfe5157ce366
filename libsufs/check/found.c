/*
 * found.c - what the passes find that later passes use: the directories
 * (pass 1 adds them, pass 2 fills in their names and '..', pass 3 walks
 * them), the names counted for each inode (passes 2 and 3 count, pass 4
 * compares), and the snapshot files and where they are named (passes 1
 * and 2 note them, pass 4 judges them); and the blocks pass 1 finds
 * claimed (a block map's, an attribute block), once or twice.
 */
#include "config.h"
#include "check_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The directory ino, as pass 1 found it (NULL: not a directory). */
struct dirinfo *dir_find_info(struct chk *c, uint32_t ino)
{
	size_t lo = 0, hi = c->ndirs;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (c->dirs[mid].ino == ino)
			return &c->dirs[mid];
		if (c->dirs[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Add a directory, keeping the array sorted (pass 1 adds in order); a
 * cleared directory's number given out again starts afresh. */
int dir_add_info(struct chk *c, uint32_t ino)
{
	struct dirinfo *d = dir_find_info(c, ino);
	size_t i;

	if (d) {
		memset(d, 0, sizeof(*d));
		d->ino = ino;
		return 0;
	}
	if (c->ndirs == c->capdirs) {
		size_t cap = c->capdirs ? 2 * c->capdirs : 64;
		struct dirinfo *p = realloc(c->dirs, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		c->dirs = p;
		c->capdirs = cap;
	}
	for (i = c->ndirs; i > 0 && c->dirs[i - 1].ino > ino; i--)
		c->dirs[i] = c->dirs[i - 1];
	memset(&c->dirs[i], 0, sizeof(c->dirs[i]));
	c->dirs[i].ino = ino;
	c->ndirs++;
	return 0;
}

/* ---- the maps: a bit per block, a byte per inode ---------------------------------- */

int sparse_init(struct sparse *s, uint64_t bytes, unsigned shift)
{
	s->shift = shift;
	s->n = (size_t)((bytes + (1u << shift) - 1) >> shift);
	s->chunk = calloc(s->n ? s->n : 1, sizeof(*s->chunk));
	return s->chunk ? 0 : -ENOMEM;
}

void sparse_free(struct sparse *s)
{
	size_t i;

	for (i = 0; s->chunk && i < s->n; i++)
		free(s->chunk[i]);
	free(s->chunk);
	memset(s, 0, sizeof(*s));
}

/* Byte i, its chunk made if absent (if that fails: c->nomem, and a byte
 * that goes nowhere). */
static uint8_t *sparse_at(struct chk *c, struct sparse *s, uint64_t i)
{
	size_t k = (size_t)(i >> s->shift);

	if (k >= s->n) {
		c->nomem = 1; /* cannot happen: callers range-check first */
		return &c->sink;
	}
	if (!s->chunk[k] && !(s->chunk[k] = calloc((size_t)1 << s->shift, 1))) {
		c->nomem = 1;
		return &c->sink;
	}
	return &s->chunk[k][i & ((1u << s->shift) - 1)];
}

void found_set(struct chk *c, uint64_t blk)
{
	*sparse_at(c, &c->found, blk >> 3) |= (uint8_t)(1u << (blk & 7));
}

void found_clear(struct chk *c, uint64_t blk)
{
	if (found_test(c, blk))
		*sparse_at(c, &c->found, blk >> 3) &= (uint8_t)~(1u << (blk & 7));
}

void ino_set_ftype(struct chk *c, uint32_t ino, unsigned ftype, int single)
{
	uint8_t *p;

	if (!ftype && !sparse_get(&c->ino, ino))
		return;
	p = sparse_at(c, &c->ino, ino);
	*p = (uint8_t)((*p & ~(INO_FT_MASK | INO_SINGLE)) | (ftype & INO_FT_MASK) |
		       (single ? INO_SINGLE : 0));
}

/*
 * The names counted for each inode (saturated at UINT16_MAX, which pass 4
 * then leaves alone): in its byte up to INO_MANY - 1, else in a table of
 * the few inodes with more (hard links by the dozen), found by hashing.
 * An inode whose byte says INO_MANY but which the table lacks (it could
 * not grow) counts as saturated: pass 4 leaves it alone.
 */
static uint32_t *many_slot(const struct many *m, uint32_t ino)
{
	size_t i = (ino * 2654435761u) & (m->cap - 1);

	while (m->ino[i] && m->ino[i] != ino)
		i = (i + 1) & (m->cap - 1);
	return &m->ino[i];
}

static int many_grow(struct many *m)
{
	struct many g = { NULL, NULL, 0, m->cap ? 2 * m->cap : 64 };
	size_t i;

	g.ino = calloc(g.cap, sizeof(*g.ino));
	g.names = calloc(g.cap, sizeof(*g.names));
	if (!g.ino || !g.names) {
		free(g.ino);
		free(g.names);
		return -ENOMEM;
	}
	for (i = 0; i < m->cap; i++)
		if (m->ino[i]) {
			uint32_t *s = many_slot(&g, m->ino[i]);
			*s = m->ino[i];
			g.names[s - g.ino] = m->names[i];
		}
	g.n = m->n;
	free(m->ino);
	free(m->names);
	*m = g;
	return 0;
}

/* ino's count in the table, made with INO_MANY names if new (NULL: no room). */
static uint32_t *many_names(struct chk *c, uint32_t ino)
{
	struct many *m = &c->many;
	uint32_t *s;

	if ((m->n + 1) * 4 > m->cap * 3 && many_grow(m))
		return NULL;
	s = many_slot(m, ino);
	if (!*s) {
		*s = ino;
		m->names[s - m->ino] = INO_MANY;
		m->n++;
	}
	return &m->names[s - m->ino];
}

uint32_t ino_names(const struct chk *c, uint32_t ino)
{
	uint32_t n = sparse_get(&c->ino, ino) >> INO_NAMES_SHIFT, *s;

	if (n < INO_MANY)
		return n;
	s = c->many.cap ? many_slot(&c->many, ino) : NULL;
	return s && *s ? c->many.names[s - c->many.ino] : UINT16_MAX;
}

static void set_names(struct chk *c, uint32_t ino, uint32_t n)
{
	uint32_t *p;
	uint8_t *b;

	if (!n && !sparse_get(&c->ino, ino))
		return;
	if (n >= INO_MANY && (p = many_names(c, ino)) != NULL)
		*p = n;
	b = sparse_at(c, &c->ino, ino);
	*b = (uint8_t)((*b & (INO_FT_MASK | INO_SINGLE)) |
		       (n < INO_MANY ? n : INO_MANY) << INO_NAMES_SHIFT);
}

void count_link(struct chk *c, uint32_t ino)
{
	uint32_t n;

	if (ino < 1 || ino > c->ninodes)
		return;
	n = ino_names(c, ino);
	if (n < UINT16_MAX)
		set_names(c, ino, n + 1);
}

void uncount_link(struct chk *c, uint32_t ino)
{
	uint32_t n;

	if (ino < 1 || ino > c->ninodes)
		return;
	n = ino_names(c, ino);
	if (n && n < UINT16_MAX)
		set_names(c, ino, n - 1);
}

void ino_forget(struct chk *c, uint32_t ino)
{
	set_names(c, ino, 0);
	ino_set_ftype(c, ino, 0, 0);
}

/* ---- snapshot files -------------------------------------------------------- */

/* Pass 1: a file with the snapshot flag, judged after the slots are
 * (snap_orphans()). */
int flagged_note(struct chk *c, uint32_t ino)
{
	if (c->nflagged == c->capflagged) {
		size_t cap = c->capflagged ? 2 * c->capflagged : 4;
		struct flagged *v = realloc(c->flagged, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		c->flagged = v;
		c->capflagged = cap;
	}
	memset(&c->flagged[c->nflagged], 0, sizeof(c->flagged[0]));
	c->flagged[c->nflagged++].ino = ino;
	return 0;
}

/* Pass 2: an entry names ino; if it has the snapshot flag, remember where
 * (the list is in inode order: pass 1 made it so). */
void flagged_name(struct chk *c, uint32_t dir, uint32_t ino, const uint8_t *de)
{
	size_t lo = 0, hi = c->nflagged;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (c->flagged[mid].ino < ino)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == c->nflagged || c->flagged[lo].ino != ino || c->flagged[lo].dir)
		return;
	c->flagged[lo].dir = dir;
	c->flagged[lo].name_blk = c->cur_pblk;
	c->flagged[lo].name_off = (uint32_t)(de - c->cur_blk);
	memcpy(c->flagged[lo].name, de + DE_NAME, de[DE_NAMELEN]);
	c->flagged[lo].name[de[DE_NAMELEN]] = 0;
}

/* What check_snap_slots() needs to know of names: /.snap, and the files
 * named there.  The root comes first in pass 2. */
void note_snap_name(struct chk *c, const struct dirinfo *d, uint32_t ino,
		    const char *name)
{
	uint32_t i;

	if (d->ino == SUFS_ROOT_INO && ino_ftype(c, ino) == SUFS_FT_DIR && !strcmp(name, ".snap")) {
		c->snapdir = ino;
		return;
	}
	if (!c->snapdir || d->ino != c->snapdir)
		return;
	for (i = 0; i < SUFS_SNAP_SLOTS; i++)
		if (c->fs->sb.snap[i].ino == ino)
			c->snap_named |= 1u << i;
}

/* Does a slot name inode ino? */

/* ---- blocks ---- */

/* The inode being walked claims block b: found, or found twice. */
int claim_block(struct chk *c, uint64_t b)
{
	if (found_test(c, b)) {
		if (!c->dup) {
			c->dup = calloc((c->nblocks + 7) / 8, 1);
			if (!c->dup)
				return -ENOMEM;
		}
		if (!bit_test(c->dup, b))
			c->ndups++;
		bit_set(c->dup, b);
		return 0;
	}
	found_set(c, b);
	if (c->nclaimed == c->capclaimed) {
		size_t cap = c->capclaimed ? 2 * c->capclaimed : 256;
		uint64_t *p = realloc(c->claimed, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		c->claimed = p;
		c->capclaimed = cap;
	}
	c->claimed[c->nclaimed++] = b;
	return 0;
}
