/* A library that looks like PHP's engine from outside, for tests/unit/test-php.c: the names PHP
 * exports and the strings its build carries, with none of its code. EG_SIZE sets the size of
 * executor_globals (a build of another layout). */
#ifndef EG_SIZE
#define EG_SIZE 1800
#endif

char executor_globals[EG_SIZE];
char compiler_globals[568];
char core_globals[672];
char sapi_module[280];
const char hs_fake_php_powered_by[] = "X-Powered-By: PHP/8.2.99";
const char hs_fake_php_build_id[] = "API420220829,NTS";

void execute_ex(void *ex);
void execute_ex(void *ex)
{
	executor_globals[0] = (char)(ex != 0);
}

/* ZEND_VM_KIND_HYBRID, compiled as PHP's is: mov $4, %eax; ret */
int zend_vm_kind(void);
int zend_vm_kind(void)
{
	return 4;
}
