/* A library that only looks like libruby to test-ruby: the symbols the Ruby reader looks for,
 * with the TLS form of the real one, but none of its code. Built once as libruby-3.1.so (its
 * version 3.1.2) and once as libruby-fake.so with FAKE_VERSION set to another. */
#ifndef FAKE_VERSION
#define FAKE_VERSION "3.1.2"
#endif

const char ruby_version[] = FAKE_VERSION;
__thread void *ruby_current_ec;
void *ruby_current_vm_ptr;
void *ruby_single_main_ractor;

void *rb_thread_current(void);
void *rb_vm_exec(void *ec, int jit);
void *rb_id2str(unsigned long id);
int rb_profile_frames(int start, int limit, void **buff, int *lines);

void *rb_thread_current(void)
{
	return ruby_current_ec;
}

void *rb_vm_exec(void *ec, int jit)
{
	return jit ? ec : ruby_current_ec;
}

void *rb_id2str(unsigned long id)
{
	return id > 169 ? (void *)(id >> 4) : ruby_current_ec;
}

int rb_profile_frames(int start, int limit, void **buff, int *lines)
{
	for (int i = start; i < limit; i++) {
		buff[i] = ruby_current_ec;
		lines[i] = i;
	}
	return limit;
}
