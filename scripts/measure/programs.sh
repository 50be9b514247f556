# The programs a measure script runs (sourced): SF, MPCMC and FASTCHESS name
# them, by default Debian's Stockfish, the release build and
# ../shared/tools/fastchess (run from the repository root).
sf=${SF:-/usr/games/stockfish}
mpcmc=${MPCMC:-target/release/mpcmc}
fc=${FASTCHESS:-../shared/tools/fastchess}
