/* check's hard-links row: no file with more than one link in a user's tree or a shared folder but a holder's own. */
#include <errno.h>
#include <fcntl.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "check-int.h"
#include "path.h"
#include "resolve.h"
#include "walk.h"

#define LINKS_SHOWN 5

struct links {
        struct strbuf found;    /* the first LINKS_SHOWN files, as shown */
        unsigned long n;        /* files with more than one link */
        unsigned long unread;   /* trees whose walk stopped short of their end */
        struct strbuf why;      /* the first of them and its reason */
        const char *note;       /* after each file found: whose tree it is */
        struct slotinfo *slot;  /* the assigned slot whose tree is walked: entries of another account, for user-tree */
        uid_t svc_uid;
        void *own;              /* the slot's own files with more than one link met in its tree (tsearch) */
};

/* A file of the slot's own with more than one link: how many of its names its tree holds. */
struct linked {
        dev_t dev;
        ino_t ino;
        unsigned long nlink, names;
        char path[];            /* the first name met, as shown */
};

static int linked_cmp(const void *a, const void *b)
{
        const struct linked *x = a, *y = b;

        if (x->dev != y->dev)
                return x->dev < y->dev ? -1 : 1;
        return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* A file with more than one link that is a FAIL, names of its names met. */
static void links_found(struct links *l, const char *path, unsigned long names)
{
        if (l->n < LINKS_SHOWN) {
                strbuf_sep(&l->found, ", ");
                strbuf_addf(&l->found, "%s%s", path, l->note);
        }
        l->n += names;
}

/* A name of the slot's own file with more than one link, met in its user's tree: counted by inode. */
static void links_own(struct links *l, const struct slots_walk_entry *en)
{
        size_t len = strlen(en->path) + 1;
        struct linked *x = malloc(sizeof(*x) + len), **in;

        if (!x) {
                l->found.oom = true;
                return;
        }
        *x = (struct linked){ makedev(en->sx->stx_dev_major, en->sx->stx_dev_minor), en->sx->stx_ino,
                              en->sx->stx_nlink, 1 };
        memcpy(x->path, en->path, len);
        in = tsearch(x, &l->own, linked_cmp);
        if (in && *in == x)
                return;
        if (!in) {
                l->found.oom = true;
        } else {
                (*in)->names++;
                if ((*in)->nlink < x->nlink)
                        (*in)->nlink = x->nlink;        /* linked meanwhile: the most it had */
        }
        free(x);
}

/*
 * The slot's own files with more than one link, once its tree is walked: one whose every name
 * lies in the tree is the holder's own (release replaces each name by a copy of the service's),
 * a WARN of the slot; one with a name elsewhere is a FAIL like any other.
 */
static unsigned long links_settle(struct check_run *k, struct links *l, const struct slotinfo *s)
{
        struct strbuf w = { 0 };
        unsigned long n = 0;

        while (l->own) {
                struct linked *x = *(struct linked **) l->own;

                tdelete(x, &l->own, linked_cmp);
                if (x->names < x->nlink)
                        links_found(l, x->path, x->names);
                else if (n++ < LINKS_SHOWN)
                        strbuf_addf(&w, "%s%s", w.len ? ", " : "", x->path);
                free(x);
        }
        if (n)
                check_add_rowf(k, SLOTS_CHECK_WARN, "hard-links", s->name, NULL,
                               "%lu file%s of %s's own with more than one link, every name in its user's tree %s: "
                               "%s%s; release replaces each name by a copy of the service's, so nothing is at risk "
                               "for the slot's next holder: look at what its holder runs", n, n == 1 ? "" : "s",
                               s->name, s->tree_shown, strbuf_str(&w), n > LINKS_SHOWN ? ", ..." : "");
        if (w.oom)
                k->err = -ENOMEM;
        strbuf_free(&w);
        return n;
}

/* Counts a tree that could not be read to its end; the first one is named with its reason. */
static void links_unread(struct links *l, const char *shown, const char *reason)
{
        if (l->unread++ == 0)
                strbuf_addf(&l->why, "%s: %s", shown, reason);
}

/* The walker's visitor: files with more than one link are counted.  Only reads. */
static int links_visit(void *data, enum slots_walk_event ev, const struct slots_walk_entry *en, struct slots_error *e)
{
        struct links *l = data;

        (void) e;
        /* Neither the service's nor the slot's: another account's, which assign hands to the service. */
        if (l->slot && (ev == SLOTS_WALK_ENTRY || ev == SLOTS_WALK_ENTER) && !en->other_fs &&
            en->sx->stx_uid != l->svc_uid && en->sx->stx_uid != l->slot->pw.uid && l->slot->foreign++ == 0)
                snprintf(l->slot->foreign_first, sizeof(l->slot->foreign_first), "%s (uid %u)", en->path,
                         (unsigned) en->sx->stx_uid);
        if (ev != SLOTS_WALK_ENTRY || en->other_fs || S_ISDIR(en->sx->stx_mode) || en->sx->stx_nlink <= 1)
                return 0;
        if (l->slot && en->sx->stx_uid == l->slot->pw.uid)
                links_own(l, en);
        else
                links_found(l, en->path, 1);
        return 0;
}

/* Walks the folder fd (consumed), shown as `shown`, on its own file system, at any depth. */
static void links_walk(int fd, const char *shown, struct links *l)
{
        struct slots_walk how = { .flags = SLOTS_WALK_ONE_FS, .path = shown, .visit = links_visit, .data = l };
        struct slots_error e;

        slots_error_clear(&e);
        if (slots_walk(fd, &how, &e) < 0)
                links_unread(l, e.object, e.reason);
        close(fd);
}

/* Opens rel (a path below docs_root) with no symlink on the way and walks it. */
static void links_of(int docs, const char *rel, const char *shown, struct links *l)
{
        struct slots_chase how = {
                .flags = SLOTS_CHASE_NO_SYMLINKS | SLOTS_CHASE_MUST_DIR,
                .open_flags = O_RDONLY | O_DIRECTORY | O_NONBLOCK,
        };
        char *abs = NULL;
        int fd;

        if (asprintf(&abs, "/%s", rel) < 0) {
                l->found.oom = true;
                return;
        }
        fd = slots_chase(docs, abs, &how, NULL, NULL);
        free(abs);
        if (fd == -ENOENT)
                return;         /* user-tree says so */
        if (fd < 0) {
                links_unread(l, shown, strerror(-fd));
                return;
        }
        links_walk(fd, shown, l);
}

/*
 * The FAIL: files with more than one link, or a tree not read to its end (what
 * was not read may hold one).  The fix never keeps a slot's owner or set-id
 * bits: the copy is root's new file, handed to the service, without them.
 */
static void links_fail(struct check_run *k, const struct links *l, struct strbuf *d, struct strbuf *f)
{
        const struct slots_config *c = k->cfg;

        if (l->n)
                strbuf_addf(d, "%lu file%s with more than one link: %s%s", l->n, l->n == 1 ? "" : "s",
                            strbuf_str(&l->found), l->n > LINKS_SHOWN ? ", ..." : "");
        if (l->unread)
                strbuf_addf(d, "%s%lu tree%s not read to the end, so not known to hold none: %s", l->n ? "; " : "",
                            l->unread, l->unread == 1 ? "" : "s", strbuf_str(&l->why));
        if (l->n)
                strbuf_addf(f, "remove the extra name, or give the file a copy of its own, the service's and without "
                            "set-id bits (cp FILE FILE.copy && chmod ug-s FILE.copy && chown %s:%s FILE.copy && "
                            "mv FILE.copy FILE); assign and release never widen a file with more than one link, since "
                            "its other name may be a shared or private file (find %s -xdev -type f -links +1 lists "
                            "them)", c->service, k->group_name ? k->group_name : c->service, c->docs_root);
        else
                strbuf_addf(f, "make the folder readable by root (or remove it), then run check again");
        check_add_row(k, SLOTS_CHECK_FAIL, "hard-links", NULL, d, f);
}

/*
 * Every shared folder and every assigned user's tree: a file there with more
 * than one link is never changed by assign or release (its other name may be a
 * shared or a private file), so it is a FAIL the admin must look at.
 */
void check_hard_links(struct check_run *k)
{
        const struct slots_config *c = k->cfg;
        struct links l = { 0 };
        struct strbuf d = { 0 }, f = { 0 };
        unsigned long warned = 0;
        int docs;

        if (!c->docs_root) {
                check_add_rowf(k, SLOTS_CHECK_SKIP, "hard-links", NULL, NULL, "%s sets no docs_root", c->path);
                return;
        }
        docs = check_docs_for_walk(k, "hard-links");
        if (docs < 0)
                return;
        for (size_t i = 0; i < c->n_shared_dirs; i++) {
                char *shown = NULL;

                if (!(shown = slots_path_join(c->docs_root, c->shared_dirs[i]))) {
                        k->err = -ENOMEM;
                        break;
                }
                l.note = "";
                links_of(docs, c->shared_dirs[i], shown, &l);
                free(shown);
        }
        l.svc_uid = k->svc_found > 0 ? k->svc_pw.uid : 0;
        for (size_t i = 0; i < k->n_slots; i++) {
                struct slotinfo *s = &k->slots[i];
                size_t dl = strlen(c->docs_root);
                char note[64];

                if (!s->tree || strncmp(s->tree, c->docs_root, dl) != 0)
                        continue;
                snprintf(note, sizeof(note), " (%s's user)", s->name);
                l.note = note;
                l.slot = k->svc_found > 0 && s->have_id ? s : NULL;
                links_of(docs, s->tree + dl + (s->tree[dl] == '/'), s->tree_shown, &l);
                warned += links_settle(k, &l, s);
        }
        l.slot = NULL;
        close(docs);
        if (l.n || l.unread) {
                links_fail(k, &l, &d, &f);
        } else {
                strbuf_addf(&d, "no file with more than one link in the shared folders and the users' trees%s",
                            warned ? " but a holder's own within its tree (its WARN row)" : "");
                check_add_row(k, SLOTS_CHECK_PASS, "hard-links", NULL, &d, NULL);
        }
        if (l.found.oom || l.why.oom)
                k->err = -ENOMEM;
        strbuf_free(&l.found);
        strbuf_free(&l.why);
        strbuf_free(&d);
        strbuf_free(&f);
}
