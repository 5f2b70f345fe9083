/*
 * The permission model (perm.c): mode bits and POSIX ACLs evaluated as the kernel does, the
 * fixes derived from them, and whether a path's steps surely refuse an account, as tables.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <acl/libacl.h>
#include <sys/acl.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "perm.h"
#include "unit.h"

/* The account under test: slot01 (1001), primary group 1001, also in slotshared (1500). */
static const gid_t slot_groups[] = { 1001, 1500 };
static const struct slots_ident slot01 = { .uid = 1001, .gid = 1001, .groups = slot_groups, .n_groups = 2 };

static const char *uname_cb(void *arg, uid_t uid, char *buf, size_t size)
{
        (void) arg;
        snprintf(buf, size, "%s", uid == 1001 ? "slot01" : uid == 0 ? "root" : uid == 900 ? "svc" : "someone");
        return buf;
}

static const char *gname_cb(void *arg, gid_t gid, char *buf, size_t size)
{
        (void) arg;
        snprintf(buf, size, "%s", gid == 1500 ? "slotshared" : gid == 1001 ? "slot01" : gid == 0 ? "root" : "other");
        return buf;
}

static const struct slots_perm_names names = { .user = uname_cb, .group = gname_cb, .new_owner = 900 };

/* A folder or file: owner, group, mode, and an ACL in setfacl's text form (NULL: mode bits only). */
struct file {
        uid_t uid;
        gid_t gid;
        mode_t mode;            /* with S_IFDIR or S_IFREG */
        const char *acl;
};

/* setfacl's text form as the decoded attribute (libacl parses the text; acl.c is the reader under test). */
static void acl_of_text(const char *text, struct slots_acl *out)
{
        acl_t acl = acl_from_text(text);
        acl_entry_t e;
        size_t n = 0;

        assert_non_null(acl);
        out->entries = calloc(64, sizeof(*out->entries));
        assert_non_null(out->entries);
        for (int r = acl_get_entry(acl, ACL_FIRST_ENTRY, &e); r == 1 && n < 64;
             r = acl_get_entry(acl, ACL_NEXT_ENTRY, &e)) {
                acl_permset_t ps;
                acl_tag_t tag;
                void *q;

                assert_int_equal(acl_get_tag_type(e, &tag), 0);
                assert_int_equal(acl_get_permset(e, &ps), 0);
                out->entries[n] = (struct slots_acl_entry){
                        .tag = (unsigned) tag,
                        .perm = (acl_get_perm(ps, ACL_READ) == 1 ? 4u : 0) | (acl_get_perm(ps, ACL_WRITE) == 1 ? 2u : 0) |
                                (acl_get_perm(ps, ACL_EXECUTE) == 1 ? 1u : 0),
                };
                if (tag == ACL_USER || tag == ACL_GROUP) {
                        q = acl_get_qualifier(e);
                        assert_non_null(q);
                        out->entries[n].id = tag == ACL_USER ? (uint32_t) *(uid_t *) q : (uint32_t) *(gid_t *) q;
                        acl_free(q);
                }
                n++;
        }
        out->n = n;
        acl_free(acl);
}

static void model(const struct file *f, struct slots_perm_model *m)
{
        struct stat st = { .st_uid = f->uid, .st_gid = f->gid, .st_mode = f->mode };
        struct slots_acl acl = { 0 };

        if (f->acl)
                acl_of_text(f->acl, &acl);
        slots_perm_from_stat(m, &st, f->acl ? &acl : NULL);
        slots_acl_free(&acl);
}

#define DIR_(m) (S_IFDIR | (m))
#define REG_(m) (S_IFREG | (m))
#define X SLOTS_PERM_X
#define R SLOTS_PERM_R

static const struct {
        const char *what;
        struct file f;
        unsigned want;
        bool allowed;
        enum slots_perm_via via;
        const char *fix;                /* slots_perm_fix_grant for /p */
} grants[] = {
        { "0755 root:root: others search", { 0, 0, DIR_(0755), NULL }, X, true, SLOTS_VIA_OTHER, "" },
        { "0700 root:root: others cannot", { 0, 0, DIR_(0700), NULL }, X, false, SLOTS_VIA_OTHER, "chmod o+x /p" },
        { "0711 is enough to search", { 0, 0, DIR_(0711), NULL }, X, true, SLOTS_VIA_OTHER, "" },
        { "launcher 0711: exec but not read", { 0, 0, REG_(0711), NULL }, R | X, false, SLOTS_VIA_OTHER,
          "chmod o+rx /p" },
        { "launcher 0755", { 0, 0, REG_(0755), NULL }, R | X, true, SLOTS_VIA_OTHER, "" },
        /* the group class decides once the account is in the group: others' x does not count then */
        { "0750 root:slotshared", { 0, 1500, DIR_(0750), NULL }, X, true, SLOTS_VIA_GROUP, "" },
        { "0705 root:slotshared: group wins over other", { 0, 1500, DIR_(0705), NULL }, X, false, SLOTS_VIA_GROUP,
          "chmod g+x /p" },
        /* the owner class decides for the owner, whatever the others get */
        { "owned by slot01, 0075", { 1001, 0, DIR_(0075), NULL }, X, false, SLOTS_VIA_OWNER, "chmod u+x /p" },
        /* a named user entry with nothing: mode bits alone would pass */
        { "u:slot01:--- on 0755", { 0, 0, DIR_(0755), "u::rwx,u:1001:---,g::r-x,m::r-x,o::r-x" }, X, false,
          SLOTS_VIA_USER, "setfacl -x u:slot01 /p" },
        { "u:slot01:--- on 0750: removing it is not enough",
          { 0, 0, DIR_(0750), "u::rwx,u:1001:---,g::r-x,m::r-x,o::---" }, X, false, SLOTS_VIA_USER,
          "setfacl -m u:slot01:--x /p" },
        { "u:slot01:r-x cut by mask r--", { 0, 0, DIR_(0740), "u::rwx,u:1001:r-x,g::r--,m::r--,o::---" }, X,
          false, SLOTS_VIA_USER, "setfacl -m m::r-x /p" },
        { "u:slot01:r-x with mask r-x", { 0, 0, DIR_(0750), "u::rwx,u:1001:r-x,g::r--,m::r-x,o::---" }, X, true,
          SLOTS_VIA_USER, "" },
        /* named groups: any matching entry that has it, then the mask */
        { "g:slotshared:r-x", { 0, 0, DIR_(0750), "u::rwx,g::---,g:1500:r-x,m::r-x,o::---" }, X, true,
          SLOTS_VIA_GROUP, "" },
        { "g:slotshared:r-- and g::--- (root group): matched, none gives x",
          { 0, 0, DIR_(0740), "u::rwx,g::---,g:1500:r--,m::r--,o::--x" }, X, false, SLOTS_VIA_GROUP,
          "setfacl -m g:slotshared:r-x /p" },
        { "g:slotshared:r-x cut by mask r--", { 0, 0, DIR_(0740), "u::rwx,g::---,g:1500:r-x,m::r--,o::--x" }, X,
          false, SLOTS_VIA_GROUP, "setfacl -m m::r-x /p" },
        { "owning group slotshared with ACL, g::r--",
          { 0, 1500, DIR_(0740), "u::rwx,g::r--,g:2000:rwx,m::rwx,o::--x" }, X, false, SLOTS_VIA_GROUP,
          "setfacl -m g::r-x /p" },
        /* an ACL that does not name slot01: the other bits decide */
        { "u:someone:--- does not touch slot01", { 0, 0, DIR_(0751), "u::rwx,u:4242:---,g::r-x,m::r-x,o::--x" }, X,
          true, SLOTS_VIA_OTHER, "" },
};

static void test_grants(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(grants); i++) {
                struct slots_perm_model m;
                struct slots_perm_verdict v;
                char fix[512];
                int r;

                model(&grants[i].f, &m);
                v = slots_perm_eval(&m, &slot01, grants[i].want);
                if (v.allowed != grants[i].allowed || v.via != grants[i].via)
                        ROW_FAIL("%s: allowed %d via %d, want %d via %d", grants[i].what, v.allowed, v.via,
                                 grants[i].allowed, grants[i].via);
                r = slots_perm_fix_grant(&m, &slot01, grants[i].want, "/p", &names, fix, sizeof(fix));
                if (r < 0 || strcmp(fix, grants[i].fix) != 0)
                        ROW_FAIL("%s: fix \"%s\" (%d), want \"%s\"", grants[i].what, r < 0 ? "" : fix, r,
                                 grants[i].fix);
        }
        if (failures)
                fail_msg("%d rows failed", failures);
}

static const struct {
        const char *what;
        struct file f;
        const char *fix;                /* slots_perm_fix_deny for /p */
} denies[] = {
        { "0700 folder: nothing to take", { 0, 0, DIR_(0700), NULL }, "" },
        { "private folder 0755", { 900, 900, DIR_(0755), NULL }, "chmod o-rwx /p" },
        { "private folder 0711: search alone reaches inside", { 900, 900, DIR_(0711), NULL }, "chmod o-rwx /p" },
        { "private file 0604", { 900, 900, REG_(0604), NULL }, "chmod o-rwx /p" },
        { "private file 0601: x on a file is not reaching it", { 900, 900, REG_(0601), NULL }, "" },
        { "private file 0640 group slotshared", { 900, 1500, REG_(0640), NULL }, "chmod g-rwx /p" },
        { "u:slot01:r-- on 0600", { 900, 900, REG_(0640), "u::rw-,u:1001:r--,g::---,m::r--,o::---" },
          "setfacl -x u:slot01 /p" },
        { "u:slot01:r-x on a 0755 folder: the entry and the other bits",
          { 900, 900, DIR_(0755), "u::rwx,u:1001:r-x,g::r-x,m::r-x,o::r-x" }, "setfacl -x u:slot01 /p && chmod o-rwx /p" },
        { "u:slot01:r-- cut by mask ---: already refused",
          { 900, 900, REG_(0600), "u::rw-,u:1001:r--,g::---,m::---,o::---" }, "" },
        { "g:slotshared:r--", { 900, 900, REG_(0640), "u::rw-,g::---,g:1500:r--,m::r--,o::---" },
          "setfacl -x g:slotshared /p" },
        { "owned by slot01", { 1001, 900, REG_(0600), NULL }, "chown svc /p" },
};

static void test_denies(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(denies); i++) {
                struct slots_perm_model m;
                char fix[512];
                int r;

                model(&denies[i].f, &m);
                r = slots_perm_fix_deny(&m, &slot01, "/p", &names, fix, sizeof(fix));
                if (r < 0 || strcmp(fix, denies[i].fix) != 0)
                        ROW_FAIL("%s: fix \"%s\" (%d), want \"%s\"", denies[i].what, r < 0 ? "" : fix, r,
                                 denies[i].fix);
        }
        if (failures)
                fail_msg("%d rows failed", failures);
}

/* A path that needs quoting is quoted; the placeholders of a user's tree are left as they are. */
static void test_fix_paths(void **state)
{
        const struct file f = { 0, 0, DIR_(0700), NULL };
        struct slots_perm_model m;
        char fix[512];

        (void) state;
        model(&f, &m);
        assert_true(slots_perm_fix_grant(&m, &slot01, X, "/srv/my app/it's", &names, fix, sizeof(fix)) > 0);
        assert_string_equal(fix, "chmod o+x '/srv/my app/it'\\''s'");
        assert_true(slots_perm_fix_grant(&m, &slot01, X, "<docs>/_users/<user>", &names, fix, sizeof(fix)) > 0);
        assert_string_equal(fix, "chmod o+x <docs>/_users/<user>");
}

/*
 * slots_perm_path_denies: whether the modes of a user's tree and the folders above it surely keep
 * slot01 from listing it (then the user-tree row needs no probe for that tree).
 */
static const struct {
        const char *what;
        struct file steps[3];           /* docs, _users, the tree (the end) */
        bool have_end_model;
        int err;                        /* the walk could not follow the path */
        bool denies;
} trees[] = {
        { "another slot's tree 2770", { { 900, 900, DIR_(0755), NULL }, { 900, 900, DIR_(0711), NULL },
                                        { 900, 2002, DIR_(02770), NULL } }, true, 0, true },
        { "slot01's own tree", { { 900, 900, DIR_(0755), NULL }, { 900, 900, DIR_(0711), NULL },
                                 { 900, 1001, DIR_(02770), NULL } }, true, 0, false },
        { "a tree open to others", { { 900, 900, DIR_(0755), NULL }, { 900, 900, DIR_(0711), NULL },
                                     { 900, 2002, DIR_(02775), NULL } }, true, 0, false },
        { "an ACL entry for slot01", { { 900, 900, DIR_(0755), NULL }, { 900, 900, DIR_(0711), NULL },
                                       { 900, 2002, DIR_(02770), "u::rwx,u:1001:r-x,g::rwx,m::rwx,o::---" } },
          true, 0, false },
        { "open, but _users not searchable", { { 900, 900, DIR_(0755), NULL }, { 900, 900, DIR_(0700), NULL },
                                               { 900, 2002, DIR_(02775), NULL } }, true, 0, true },
        { "no model of the end: the probe decides", { { 900, 900, DIR_(0755), NULL }, { 900, 900, DIR_(0711), NULL },
                                                     { 900, 2002, DIR_(02770), NULL } }, false, 0, false },
        { "a walk that failed: the probe decides", { { 900, 900, DIR_(0755), NULL }, { 900, 900, DIR_(0711), NULL },
                                                    { 900, 2002, DIR_(02770), NULL } }, true, ENOENT, false },
};

static void test_path_denies(void **state)
{
        int failures = 0;

        (void) state;
        for (size_t i = 0; i < N_ELEM(trees); i++) {
                struct slots_perm_step steps[3];
                struct slots_perm_path w = { .steps = steps, .n = 3, .err = trees[i].err };

                for (size_t j = 0; j < 3; j++) {
                        memset(&steps[j], 0, sizeof(steps[j]));
                        steps[j].traverse = j < 2;
                        steps[j].have_model = j < 2 || trees[i].have_end_model;
                        model(&trees[i].steps[j], &steps[j].m);
                }
                if (slots_perm_path_denies(&w, &slot01, R) != trees[i].denies)
                        ROW_FAIL("%s: slots_perm_path_denies is %d, want %d", trees[i].what, !trees[i].denies,
                                 trees[i].denies);
        }
        if (failures)
                fail_msg("%d rows failed", failures);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_grants),
                cmocka_unit_test(test_denies),
                cmocka_unit_test(test_fix_paths),
                cmocka_unit_test(test_path_denies),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
