package pathwithin

// git init and clone probe the file system and set core.ignorecase=true on
// windows, whose default file system is case-insensitive (git-config(1),
// core.ignorecase), so paths that differ only in case are one path here.
const caseInsensitive = true
