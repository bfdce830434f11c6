/* What a recording could not name in the code of the runtimes it ran: see unread.c. */
#ifndef HS_PROFILE_UNREAD_H
#define HS_PROFILE_UNREAD_H

#include "profile/profile.h"

struct hs_strbuf;
/* Appends to sb a line ("\n" after it) for each process of p whose samples are mostly in code
 * no frame names (JIT code without names, an interpreter's loop without its language's frames)
 * and that holds a fifth of the recording or more: the share, the process (comm and pid), the
 * runtime and what would name its code. read_mask: the runtimes whose readers were on
 * (HS_RT_BIT of each id), for "its frames were not read". Nothing when there is none. */
void hs_profile_unread_note(const struct hs_profile *p, unsigned read_mask, struct hs_strbuf *sb);

#endif
