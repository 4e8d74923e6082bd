from loa_mem.entry import main

main()
