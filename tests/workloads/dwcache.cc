// A C++ program with a lot of DWARF, compressed (-gz: SHF_COMPRESSED .debug_* sections, as
// Debian's debug files have them), and a hot path of inlined library code (std::map,
// std::sort, std::regex): for the debug cache's test (tests/e2e/debug-cache.sh). Spins for
// the seconds given (default 1).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

static volatile unsigned long sink;

__attribute__((noipa)) unsigned long count_words(const std::vector<std::string> &words);
__attribute__((noipa)) unsigned long sort_words(std::vector<std::string> words);
__attribute__((noipa)) unsigned long match_words(const std::vector<std::string> &words, const std::regex &re);

unsigned long count_words(const std::vector<std::string> &words)
{
	std::map<std::string, unsigned long> counts;

	for (const std::string &w : words)
		counts[w]++;
	return counts.size();
}

unsigned long sort_words(std::vector<std::string> words)
{
	std::sort(words.begin(), words.end());
	return words.front().size();
}

unsigned long match_words(const std::vector<std::string> &words, const std::regex &re)
{
	unsigned long n = 0;

	for (const std::string &w : words)
		n += std::regex_match(w, re);
	return n;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1;
	auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
	std::vector<std::string> words;
	std::regex re("w[0-9]*7");

	for (unsigned i = 0; i < 2000; i++) {
		std::ostringstream os;
		os << 'w' << (i * 7919u) % 5003u;
		words.push_back(os.str());
	}
	while (std::chrono::steady_clock::now() < end)
		sink += count_words(words) + sort_words(words) + match_words(words, re);
	return 0;
}
