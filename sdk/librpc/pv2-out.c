/* SPDX-License-Identifier: MIT */
#include <stdlib.h>

#include "perflibv2.h"

void pv2_out_done(struct pv2_out *o)
{
        if (!o)
                return;
        free(o->data);
        *o = (struct pv2_out){ 0 };
}
