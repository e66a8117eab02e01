from hpcds1mpi.cli import main

main()
