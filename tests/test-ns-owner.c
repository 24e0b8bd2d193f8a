/* SPDX-License-Identifier: MIT */
/*
 * Who may publish a counterset (server-glue/namespace/ns-owner.c), without
 * processes: copies of countersets as uids and discovery order, decided as
 * the catalog decides them at each rebuild.  A self-described counterset
 * is its first publisher's while that user publishes it, whoever comes
 * first later; an installed one is its owner's and root's; a user's
 * countersets beyond the cap are refused, root's never.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "ns-owner.h"

#define ALICE 1000
#define MALLORY 1001
#define SERVER 4242

static GUID guid_n(unsigned n)
{
        return (GUID) { 0x0a0e0000 + n, 1, 2, { 3, 4, 5, 6, 7, 8, 9, 10 } };
}

static struct ns_copy live(unsigned g, uid_t uid, size_t order)
{
        return (struct ns_copy) { .guid = guid_n(g), .uid = uid, .order = order };
}

static struct ns *new_ns(void)
{
        struct ns *ns = NULL;

        assert_int_equal(ns_new("/nonexistent/perflib-test", &ns), 0);
        /* Whoever runs the test, the server is someone else than these users. */
        ns->server_uid = SERVER;
        return ns;
}

static void test_first_publisher_keeps_it(void **state)
{
        struct ns *ns = new_ns();
        struct ns_copy v[2] = { live(1, ALICE, 0), live(1, MALLORY, 1) };

        assert_int_equal(ns_owner_decide(ns, v, 2), 0);
        assert_int_equal(v[0].verdict, NS_ACCEPTED);
        assert_int_equal(v[1].verdict, NS_REFUSED_OWNER);
        assert_int_equal(v[1].owner, ALICE);

        /* Found first at a later rebuild, the other user's copy is still refused. */
        v[0] = live(1, MALLORY, 0);
        v[1] = live(1, ALICE, 7);
        assert_int_equal(ns_owner_decide(ns, v, 2), 0);
        assert_int_equal(v[0].verdict, NS_REFUSED_OWNER);
        assert_int_equal(v[1].verdict, NS_ACCEPTED);

        /* The owner's last copy gone, the claim goes to whoever publishes it. */
        v[0] = live(1, MALLORY, 0);
        assert_int_equal(ns_owner_decide(ns, v, 1), 0);
        assert_int_equal(v[0].verdict, NS_ACCEPTED);
        v[0] = live(1, ALICE, 0);
        v[1] = live(1, MALLORY, 1);
        assert_int_equal(ns_owner_decide(ns, v, 2), 0);
        assert_int_equal(v[0].verdict, NS_REFUSED_OWNER);
        assert_int_equal(v[1].verdict, NS_ACCEPTED);
        ns_free(ns);
}

static void test_installed_owner_and_root(void **state)
{
        struct ns *ns = new_ns();
        struct ns_copy v[5] = { live(2, MALLORY, 0), live(2, 0, 1), live(2, ALICE, 2),
                                live(2, SERVER, 3),
                                { .guid = guid_n(2), .uid = ALICE, .installed = true,
                                  .order = 4 } };

        assert_int_equal(ns_owner_decide(ns, v, 5), 0);
        assert_int_equal(v[0].verdict, NS_REFUSED_OWNER);
        assert_int_equal(v[0].owner, ALICE);
        assert_int_equal(v[1].verdict, NS_ACCEPTED);
        assert_int_equal(v[2].verdict, NS_ACCEPTED);
        assert_int_equal(v[3].verdict, NS_ACCEPTED);    /* the server's plugins */
        assert_int_equal(v[4].verdict, NS_ACCEPTED);
        /* Root does not take a self-described counterset from its first publisher. */
        v[0] = live(3, MALLORY, 0);
        v[1] = live(3, 0, 1);
        assert_int_equal(ns_owner_decide(ns, v, 2), 0);
        assert_int_equal(v[0].verdict, NS_ACCEPTED);
        assert_int_equal(v[1].verdict, NS_REFUSED_OWNER);
        ns_free(ns);
}

static void test_cap(void **state)
{
        struct ns *ns = new_ns();
        struct ns_copy v[10];
        size_t accepted = 0;

        ns_set_max_per_user(ns, 3);
        /* Ten GUIDs, one copy each: the user's found in reverse, then root's. */
        for (unsigned i = 0; i < 5; i++) {
                v[i] = live(10 + i, MALLORY, 10 - i);
                v[5 + i] = live(20 + i, 0, 20 + i);
        }
        assert_int_equal(ns_owner_decide(ns, v, 10), 0);
        for (unsigned i = 0; i < 10; i++) {
                if (v[i].uid == 0) {
                        assert_int_equal(v[i].verdict, NS_ACCEPTED);
                        continue;
                }
                /* The three found first are served, the others refused for the cap. */
                assert_int_equal(v[i].verdict, v[i].order <= 8 ? NS_ACCEPTED : NS_REFUSED_CAP);
                accepted += v[i].verdict == NS_ACCEPTED;
        }
        assert_int_equal(accepted, 3);

        /* The claims held count first, whatever is found first now. */
        for (unsigned i = 0; i < 5; i++)
                v[i] = live(10 + i, MALLORY, i);
        assert_int_equal(ns_owner_decide(ns, v, 5), 0);
        for (unsigned i = 0; i < 5; i++)
                assert_int_equal(v[i].verdict, i >= 2 ? NS_ACCEPTED : NS_REFUSED_CAP);

        /* A counterset the user at the cap found first goes to the next user. */
        v[5] = live(30, MALLORY, 0);
        v[6] = live(30, ALICE, 1);
        assert_int_equal(ns_owner_decide(ns, v, 7), 0);
        assert_int_equal(v[5].verdict, NS_REFUSED_CAP);
        assert_int_equal(v[6].verdict, NS_ACCEPTED);
        ns_free(ns);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_first_publisher_keeps_it),
                cmocka_unit_test(test_installed_owner_and_root),
                cmocka_unit_test(test_cap),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}
