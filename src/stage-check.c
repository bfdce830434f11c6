/* The program each stage's library is linked into whole, with only the libraries of the stages
 * it may use (meson.build): an undefined reference at its link is a call that breaks the
 * dependency order of docs/architecture.md. */
int main(void)
{
	return 0;
}
