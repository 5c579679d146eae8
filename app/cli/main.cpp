#include <cstdio>
int main() {
    std::puts("tilescope-cli");
    return 0;
}
