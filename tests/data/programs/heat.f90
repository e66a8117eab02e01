program heat
  use iso_fortran_env, only: int64, real64
  implicit none
  integer :: n, nloc, me, np, i, step, nsteps
  real(real64), allocatable :: u(:)[:], unew(:)
  real(real64) :: left, right, s
  real(real64), save :: tot[*]
  integer(int64) :: t0, t1, rate
  character(len=32) :: arg
  if (command_argument_count() < 1) then
     if (this_image() == 1) write(*,'(a)') 'usage: heat N'
     error stop 2
  end if
  call get_command_argument(1, arg)
  read(arg,*) n
  me = this_image(); np = num_images()
  nloc = n / np
  nsteps = 200
  allocate(u(0:nloc+1)[*], unew(nloc))
  u = 0; if (me == 1) u(1) = 1000
  sync all
  call system_clock(t0, rate)
  do step = 1, nsteps
     if (me > 1)  u(0) = u(nloc)[me-1]
     if (me < np) u(nloc+1) = u(1)[me+1]
     sync all
     do i = 1, nloc
        unew(i) = u(i) + 0.25d0*(u(i-1) - 2*u(i) + u(i+1))
     end do
     u(1:nloc) = unew
     sync all
  end do
  s = sum(u(1:nloc)); tot = s
  call co_sum(tot)
  call system_clock(t1)
  if (me == 1) then
     write(*,'(a,i0,a,i0)') 'images: ', np, ' N: ', n
     write(*,'(a,es12.5)') 'sum: ', tot
     write(*,'(a,f12.6,a)') 'elapsed: ', real(t1-t0,real64)/rate, ' s'
  end if
end program heat
