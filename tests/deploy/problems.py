"""Problems: what a deploy check found wrong, collected so that one run reports all of them."""


class Problems:
    def __init__(self):
        self.items = []

    def check(self, ok, message):
        """Records `message` unless `ok`; returns `ok`, for checks that guard further ones."""
        if not ok:
            self.items.append(message)
        return ok

    def finish(self, what):
        """Prints every problem and a summary line; the exit code (0 or 1)."""
        for p in self.items:
            print("FAIL: " + p)
        print("%s: %s" % (what, "%d problem(s)" % len(self.items) if self.items else "OK"))
        return 1 if self.items else 0
