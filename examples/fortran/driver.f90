! A Fortran solver's use of singe's H2/O2 chemistry kernel: read states, copy them to the GPU in
! the kernel's layout, launch, copy the production rates back, compare with singe's reference.
!
!   singe h2o2 --kernels chemistry --fortran --write-reference 4096 -o gen
!   gfortran gen/h2o2_species.f90 gen/h2o2_chemistry.f90 driver.f90 h2o2_chemistry.o -lcudart -lstdc++
!   ./a.out gen                               ! exit status 0 when the kernel matches

! The CUDA runtime calls the driver makes, through bind(C).
module cuda_runtime_calls
  use, intrinsic :: iso_c_binding, only: c_int, c_ptr, c_size_t
  implicit none
  integer(c_int), parameter :: cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2
  interface
    integer(c_int) function cudaMalloc(pointer, bytes) bind(C, name="cudaMalloc")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr) :: pointer
      integer(c_size_t), value :: bytes
    end function cudaMalloc
    integer(c_int) function cudaFree(pointer) bind(C, name="cudaFree")
      import :: c_int, c_ptr
      type(c_ptr), value :: pointer
    end function cudaFree
    integer(c_int) function cudaMemcpy(destination, source, bytes, kind) bind(C, name="cudaMemcpy")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: destination, source
      integer(c_size_t), value :: bytes
      integer(c_int), value :: kind
    end function cudaMemcpy
    integer(c_int) function cudaDeviceSynchronize() bind(C, name="cudaDeviceSynchronize")
      import :: c_int
    end function cudaDeviceSynchronize
  end interface
end module cuda_runtime_calls

program chemistry_driver
  use, intrinsic :: iso_c_binding
  use cuda_runtime_calls
  use singe_h2o2_chemistry  ! the launcher h2o2_chemistry and, from singe_h2o2_species, the species
  implicit none
  real(c_double), parameter :: tolerance = 1d-9  ! of the largest |wdot| of the point
  character(len=4096) :: folder
  integer :: n, species, point
  real(c_double), allocatable, target :: T(:), P(:), Y(:, :), rates(:, :), expected(:, :)
  type(c_ptr) :: d_T, d_P, d_Y, d_rates
  real(c_double) :: worst

  folder = "."
  if (command_argument_count() > 0) call get_command_argument(1, folder)
  call read_states(trim(folder) // "/h2o2_states.dat")
  if (species /= H2O2_SPECIES_COUNT) error stop "the states do not have the kernel's species"

  d_T = to_device(c_loc(T), n)
  d_P = to_device(c_loc(P), n)
  d_Y = to_device(c_loc(Y), n * species)
  call check(cudaMalloc(d_rates, bytes(n * species)), "cudaMalloc")

  ! [launch] Y(n, species) is species-major with species_stride = n; the default stream
  call check(h2o2_chemistry(d_T, d_P, d_Y, d_rates, n, n, c_null_ptr), "h2o2_chemistry")
  call check(cudaDeviceSynchronize(), "cudaDeviceSynchronize")
  call check(cudaMemcpy(c_loc(rates), d_rates, bytes(n * species), cudaMemcpyDeviceToHost), "cudaMemcpy")
  ! [launch end]

  call read_reference(trim(folder) // "/h2o2_chemistry.ref")
  worst = 0d0
  do point = 1, n
    worst = max(worst, maxval(abs(rates(point, :) - expected(point, :))) / &
        max(maxval(abs(expected(point, :))), tiny(1d0)))
  end do
  print "(a, i0, a, es9.2, a)", "h2o2_chemistry: ", n, " points, largest error ", worst, &
      " of the point's largest value"
  print "(a, a, a, es13.6, a)", "point 1: net production rate of ", trim(h2o2_species_names(H2O2_SPECIES_H2O)), &
      " ", rates(1, H2O2_SPECIES_H2O), " kmol/m^3/s"
  call check(cudaFree(d_T), "cudaFree")
  call check(cudaFree(d_P), "cudaFree")
  call check(cudaFree(d_Y), "cudaFree")
  call check(cudaFree(d_rates), "cudaFree")
  if (.not. (worst <= tolerance)) error stop "MISMATCH"

contains

  integer(c_size_t) function bytes(count)
    integer, intent(in) :: count
    bytes = int(count, c_size_t) * c_sizeof(0d0)
  end function bytes

  subroutine check(status, what)
    integer(c_int), intent(in) :: status
    character(len=*), intent(in) :: what
    if (status /= 0) then
      print "(a, a, i0)", what, ": CUDA error ", status
      error stop 2
    end if
  end subroutine check

  type(c_ptr) function to_device(host, count)
    type(c_ptr), intent(in) :: host
    integer, intent(in) :: count
    call check(cudaMalloc(to_device, bytes(count)), "cudaMalloc")
    call check(cudaMemcpy(to_device, host, bytes(count), cudaMemcpyHostToDevice), "cudaMemcpy")
  end function to_device

  ! The counts line of a singe state or reference file (after its '#' comments), left open on unit.
  subroutine open_table(path, unit, points, columns)
    character(len=*), intent(in) :: path
    integer, intent(out) :: unit, points, columns
    character(len=4096) :: line
    open(newunit=unit, file=path, status="old", action="read")
    do
      read(unit, "(a)") line
      if (line(1:1) /= "#" .and. len_trim(line) > 0) exit
    end do
    read(line, *) points, columns
  end subroutine open_table

  subroutine read_states(path)
    character(len=*), intent(in) :: path
    integer :: unit, i
    call open_table(path, unit, n, species)
    allocate(T(n), P(n), Y(n, species), rates(n, species))
    do i = 1, n
      read(unit, *) T(i), P(i), Y(i, :)
    end do
    close(unit)
  end subroutine read_states

  subroutine read_reference(path)
    character(len=*), intent(in) :: path
    integer :: unit, i, points, columns
    call open_table(path, unit, points, columns)
    if (points /= n .or. columns /= species) error stop "the reference does not match the states"
    allocate(expected(n, species))
    do i = 1, n
      read(unit, *) expected(i, :)
    end do
    close(unit)
  end subroutine read_reference
end program chemistry_driver
