"""summaryguard's static half: a libcst analyzer for the resume invariant."""
